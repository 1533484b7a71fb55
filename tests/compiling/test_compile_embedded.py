"""The compile study on the real fast model (Qwen2.5-Coder-0.5B, greedy), on the help desk's rows.

The fakes of test_compile_study.py pin the study's logic; here a real model scores the rows,
and what must hold whatever it writes is that what ships is what was scored: the artifact's
recorded score is the shipped trial's, every scored row is in the records, the held-out rows
are scored before and after, and the saved program loads and answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import freyr_dspy
from freyr_dspy.backends import is_installed
from freyr_dspy.compiling import CompileSettings
from freyr_dspy.datasets import load_tools_file
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import FAST_MODEL, Settings

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        not is_installed(FAST_MODEL), reason="the Qwen 0.5B parts are not installed"
    ),
]

HELPDESK = Path(__file__).resolve().parents[2] / "trainsets" / "helpdesk"


def _rows(name: str) -> list[dict[str, object]]:
    """The file's rows, for the program's one toolbox (the file names it ``helpdesk``)."""
    lines = (HELPDESK / name).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [{k: v for k, v in row.items() if k != "toolbox"} for row in rows]


def test_the_0_5b_compile_ships_what_it_scored(tmp_path: Path) -> None:
    [toolbox] = load_tools_file(HELPDESK / "tools.json").values()
    program = FreyrProgram.for_model(
        FAST_MODEL, toolbox=toolbox, sampling={"temperature": 0, "seed": 0}
    )
    settings = CompileSettings(minutes=None, stages=("demos",), limit=8, folds=2, max_demos=2)
    outcome = freyr_dspy.compile(
        program, _rows("train.jsonl"), test=_rows("test.jsonl")[:2], settings=settings,
        project=Settings(project_dir=tmp_path),
    )  # fmt: skip

    assert outcome.baseline.stage == "baseline" and outcome.n_rows == 8
    assert any(t.stage == "demos" for t in outcome.trials)  # a pool of the rows was tried
    records = [
        json.loads(line) for line in (tmp_path / outcome.records_path).read_text().splitlines()
    ]
    for trial in outcome.trials:  # every row a trial scored is written down
        assert sum(1 for r in records if r.get("trial") == trial.number) == trial.rows_scored
    assert sum(1 for r in records if r.get("held_out")) == 4  # 2 rows, before and after
    assert outcome.held_out is not None and outcome.held_out.rows == 2

    path = freyr_dspy.save(outcome.program, tmp_path / "helpdesk.json", outcome.meta)
    meta, _ = freyr_dspy.artifacts.read_artifact(path)
    assert meta.search is not None and meta.search["shipped"] == outcome.choice.shipped
    assert meta.scores.after == pytest.approx(outcome.shipped.accuracy, abs=1e-4)
    loaded = freyr_dspy.load(path, toolbox=toolbox)
    result = loaded(message="Any news on ticket 9001?", calls_only=True).result
    assert {call.tool for call in result.calls} <= set(toolbox.names)
