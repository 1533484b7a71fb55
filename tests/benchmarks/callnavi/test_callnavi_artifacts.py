"""CallNavi artifacts refer to API and parameter names of every domain by position."""

from __future__ import annotations

import json
from pathlib import Path

import dspy

from freyr_dspy.artifacts import build_meta, load, program_state, save
from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.benchmarks.callnavi._benchmark import CALLNAVI_BENCHMARK
from freyr_dspy.benchmarks.callnavi._data import load_domain
from freyr_dspy.settings import Settings
from tests.support.callnavi_fakes import FIXTURES


def test_names_of_every_domain_are_held_by_position_and_filled_on_load(tmp_path: Path) -> None:
    program = CALLNAVI_BENCHMARK.make_program("single", EvalOptions(data_dir=FIXTURES))
    names = program.data_names()
    pets, phones = load_domain(FIXTURES, "pets"), load_domain(FIXTURES, "phones")
    assert set(pets.data_names) | set(phones.data_names) <= set(names)
    assert len(names) == len(set(names))
    (role,) = program.role_names
    program.role(role).predict.demos = [
        dspy.Example(
            question="Pets of owner OW-42?",
            call_list='{"API": ["getPetList"], "parameters": [{"ownerID": "OW-42"}]}',
        )
    ]
    state = program_state(program)
    settings = Settings(project_dir=tmp_path, data_dir=FIXTURES)
    meta = build_meta(program, benchmark="callnavi", eval_mode="bootstrap")
    path = save(program, settings.compiled_dir / "callnavi.json", meta)
    stored = json.loads(path.read_text(encoding="utf-8"))["program"]
    (demo,) = stored[f"strategy.{role}.predict"]["demos"]
    api, parameter = (f"{{{{name:{names.index(n)}}}}}" for n in ("getPetList", "ownerID"))
    assert demo["call_list"] == f'{{"API": ["{api}"], "parameters": [{{"{parameter}": "OW-42"}}]}}'
    assert program_state(load(path, settings=settings)) == state
