from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.benchmarks import get_benchmark
from freyr_dspy.benchmarks._todo import TEST_ROWS, TodoBenchmark, load_rows
from freyr_dspy.errors import DataError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from tests.support.compile_fakes import FIXTURE, OPTIONS
from tests.support.paths import TRAINSETS_DIR

PROJECT_TRAINSET = TRAINSETS_DIR / "todo.jsonl"


def test_registered_with_test_episodes() -> None:
    benchmark = get_benchmark("todo")
    episodes = benchmark.episodes(OPTIONS)
    assert len(episodes) == len(TEST_ROWS) >= 8
    assert all(len(e.steps) == 1 and e.steps[0].start_state is not None for e in episodes)


def test_project_trainset_is_valid_and_disjoint_from_the_test_inputs() -> None:
    rows = load_rows(PROJECT_TRAINSET)
    assert len(rows) >= 30
    assert len({r.id for r in rows}) == len(rows)
    test_messages = {row["message"].lower() for row in TEST_ROWS}
    assert not test_messages & {r.message.lower() for r in rows}
    assert {c.tool for r in rows for c in r.calls} == set(FreyrProgram("todo").toolbox.names)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "message": "hi", "calls": [{"tool": "add_task"}]}', "gold call add_task"),
        ('{"id": "x", "message": "hi", "colour": 1}', "colour"),
        ('{"id": "x", "message": ', "Expecting value"),
        (
            '{"id": "x", "message": "Done", "calls": [{"tool": "complete_task", '
            '"arguments": {"title": "nope"}}]}',
            "no task titled",
        ),
    ],
)
def test_bad_rows_report_path_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "todo.jsonl"
    path.write_text(FIXTURE.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as info:
        load_rows(path)
    assert str(info.value).startswith(f"{path}:11: ")


def test_score_checks_state_and_tools(tmp_path: Path) -> None:
    from freyr_dspy.testing import ScriptedLM, register_fake, unregister_fake

    benchmark = TodoBenchmark()
    episode = next(e for e in benchmark.episodes(OPTIONS) if e.id == "add-1")
    step = episode.steps[0]
    answers = {"intent": {"*": {"intents": ["add_task"]}}, "summary": {"*": {"reply": "ok"}}}
    for priority, success in ((2, 1.0), (4, 0.0)):
        register_fake(
            "todo_score",
            ScriptedLM(
                {
                    **answers,
                    "parameters": {"*": {"arguments": {"title": "buy milk", "priority": priority}}},
                }
            ),
        )
        program = benchmark.make_program("freyr", OPTIONS)
        program.apply_assignment(
            {r: RoleModel(model="fake/todo_score") for r in program.role_names}
        )
        before = program.coerce_state(step.start_state)
        score = benchmark.score(step, before, program(message=step.message, state=before))
        assert score.success == success
        assert score.metrics["tools"] == 1.0 and score.metrics["intents"] == 1.0
        assert score.failure_kind == (None if success else "state")
        unregister_fake("todo_score")
    assert json.dumps(score.diagnostics)
