"""NLT artifacts hold the scenario's tool names by position and get them back on load."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from freyr_dspy.artifacts import build_meta, load, program_state, save
from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.errors import ArtifactError
from freyr_dspy.settings import Settings

TOOLS = ["Past Purchases", "Talk to a Human", "Sale"]


def write_scenario(data_dir: Path, tools: list[str]) -> None:
    scenario = {
        "scenario": "alex",
        "tools": [{"name": n, "description": f"about {n.lower()}"} for n in tools],
        "inputs": [],
    }
    (data_dir / "nlt").mkdir(parents=True, exist_ok=True)
    (data_dir / "nlt" / "alex.json").write_text(json.dumps(scenario), encoding="utf-8")


@pytest.fixture
def saved(tmp_path: Path) -> tuple[dict, Path, Settings]:
    """An nlt program with one demo naming two tools, saved as compiled/alex.json."""
    settings = Settings(project_dir=tmp_path, data_dir=tmp_path / "data")
    write_scenario(settings.data_dir, TOOLS)
    benchmark = get_benchmark("nlt-alex")
    options = EvalOptions(data_dir=settings.data_dir)
    program = benchmark.make_program("nlt", options)
    program.role("tool_selection").predict.demos = [
        dspy.Example(
            message="Is there a Sale on my Past Purchases? Salesman, talk to a human.",
            assessment="Past Purchases -- YES\nTalk to a Human -- NO\nSale -- YES",
        )
    ]
    state = program_state(program)
    meta = build_meta(program, benchmark="nlt-alex", eval_mode="bootstrap")
    path = save(program, settings.compiled_dir / "alex.json", meta)
    return state, path, settings


def test_saved_demos_name_no_tool_and_load_back_exactly(saved: tuple[dict, Path, Settings]) -> None:
    state, path, settings = saved
    document = json.loads(path.read_text(encoding="utf-8"))
    (demo,) = document["program"]["strategy.tool_selection.predict"]["demos"]
    assert demo["assessment"] == "{{name:0}} -- YES\n{{name:1}} -- NO\n{{name:2}} -- YES"
    # whole words only: "Salesman" and lower-case "talk to a human" are not tool names
    assert demo["message"] == "Is there a {{name:2}} on my {{name:0}}? Salesman, talk to a human."
    assert document["meta"]["name_refs"]
    assert program_state(load(path, settings=settings)) == state


def test_a_changed_catalog_is_refused(saved: tuple[dict, Path, Settings]) -> None:
    _, path, settings = saved
    write_scenario(settings.data_dir, ["Talk to a Human", "Past Purchases", "Sale"])
    with pytest.raises(ArtifactError, match="another tool catalog"):
        load(path, settings=settings)


def test_text_that_already_reads_as_a_reference_is_refused(tmp_path: Path) -> None:
    settings = Settings(project_dir=tmp_path, data_dir=tmp_path / "data")
    write_scenario(settings.data_dir, TOOLS)
    program = get_benchmark("nlt-alex").make_program("nlt", EvalOptions(data_dir=settings.data_dir))
    program.role("tool_selection").predict.demos = [dspy.Example(message="see {{name:1}}")]
    with pytest.raises(ArtifactError, match="already holds a name reference"):
        save(program, settings.compiled_dir / "alex.json")
    assert not (settings.compiled_dir / "alex.json").exists()
