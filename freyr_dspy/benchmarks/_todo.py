"""``todo``: a small benchmark on the example to-do domain.

It needs no data directory: a handful of test episodes live in this module, and the
training rows in ``trainsets/todo.jsonl``. It exists so that compiling, searching and
evaluating can be tested and demonstrated on fake LMs in seconds, and as a worked example of
the benchmark contract for people who write their own.

Gold data is declarative: each step lists the calls a correct program makes
(``expected["calls"]``). The expected final state is derived by running those calls on the
starting state, so a row whose gold calls fail is rejected when the trainset is loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freyr_dspy.benchmark import Episode, EvalOptions, GoldCall, Step, StepScore
from freyr_dspy.domains import TODO, TodoState
from freyr_dspy.errors import DataError, one_line
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result

__all__ = ["TEST_ROWS", "TodoBenchmark", "load_rows", "row_step"]

TRAINSET_FILE = "todo.jsonl"


class TodoRow(BaseModel):
    """One line of ``trainsets/todo.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    message: str = Field(min_length=1)
    conversation: str = ""
    state: TodoState = Field(default_factory=TodoState)
    calls: list[GoldCall] = Field(default_factory=list)


def _task(title: str, priority: int = 1, done: bool = False) -> dict[str, Any]:
    return {"title": title, "priority": priority, "done": done}


_GROCERIES = {"tasks": [_task("water plants", 2), _task("pay rent", 5), _task("call mum", 3)]}

#: The held-out test inputs (never in the trainset; a test checks there is no overlap).
TEST_ROWS: tuple[dict[str, Any], ...] = (
    {
        "id": "add-1",
        "message": "Add a task called buy milk with priority 2.",
        "calls": [{"tool": "add_task", "arguments": {"title": "buy milk", "priority": 2}}],
    },
    {
        "id": "add-2",
        "message": "Please put 'book dentist' on my list.",
        "state": _GROCERIES,
        "calls": [{"tool": "add_task", "arguments": {"title": "book dentist"}}],
    },
    {
        "id": "complete-1",
        "message": "I have paid the rent, mark pay rent as done.",
        "state": _GROCERIES,
        "calls": [{"tool": "complete_task", "arguments": {"title": "pay rent"}}],
    },
    {
        "id": "remove-1",
        "message": "Remove the task called call mum.",
        "state": _GROCERIES,
        "calls": [{"tool": "remove_task", "arguments": {"title": "call mum"}}],
    },
    {
        "id": "list-1",
        "message": "Which tasks are still open?",
        "state": _GROCERIES,
        "calls": [{"tool": "list_tasks", "arguments": {"status": "open"}}],
    },
    {
        "id": "time-1",
        "message": "How long is 135 minutes in hours?",
        "calls": [{"tool": "convert_minutes", "arguments": {"minutes": 135}}],
    },
    {"id": "chat-1", "message": "Hi there, who are you?", "calls": []},
    {
        "id": "add-3",
        "message": "Add an urgent task titled renew passport with priority 5.",
        "state": _GROCERIES,
        "calls": [{"tool": "add_task", "arguments": {"title": "renew passport", "priority": 5}}],
    },
)


class TodoBenchmark:
    """The ``todo`` benchmark: single-request episodes scored on state and tools."""

    name = "todo"
    description = "example to-do list domain: add/complete/remove/list tasks, convert minutes"
    strategies: tuple[str, ...] = ("freyr", "native", "prompted", "nlt", "gated")

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """Return the built-in test episodes (the data directory is not used)."""
        steps = [row_step(TodoRow.model_validate(row)) for row in TEST_ROWS]
        episodes = [Episode(id=s.id, case=s.id.split("-")[0], steps=(s,)) for s in steps]
        return episodes[: options.limit] if options.limit else episodes

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """Build a fresh program on the ``todo`` domain."""
        return FreyrProgram(TODO, strategy=strategy, **options.extra.get("program", {}))

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Success when the final state and the set of successful tools match the gold calls."""
        result: Result = prediction.result
        gold = [GoldCall.model_validate(c) for c in step.expected.get("calls", [])]
        expected_state = apply_calls(TodoState.model_validate(_dump(before)), gold)
        state_ok = _normalise(result.state) == _normalise(expected_state)
        called = {c.tool for c in result.calls if c.outcome.ok}
        tools_ok = called == {c.tool for c in gold}
        intents_ok = {i for i in result.intents if i != "conversation"} == {c.tool for c in gold}
        kind = None
        if not (state_ok and tools_ok):
            failed_model = result.failure is not None and result.failure.model_failed
            kind = "model" if failed_model else ("tools" if not tools_ok else "state")
        return StepScore(
            success=float(state_ok and tools_ok),
            metrics={
                "state": float(state_ok),
                "tools": float(tools_ok),
                "intents": float(intents_ok),
            },
            failure_kind=kind,
            diagnostics={"expected_tools": sorted(c.tool for c in gold), "called": sorted(called)},
        )

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """Read ``trainsets/todo.jsonl``; every row is checked (``path:line`` on error).

        Raises:
            DataError: for a missing file, invalid JSON, a row that does not validate, or
                gold calls that fail on the row's starting state.
        """
        steps = [row_step(row) for row in load_rows(trainsets_dir / TRAINSET_FILE)]
        return [Episode(id=s.id, case="train", steps=(s,)) for s in steps]


def load_rows(path: Path) -> list[TodoRow]:
    """Load and check every row of a todo trainset file.

    Raises:
        DataError: with ``path:line`` for the first bad row.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(path, None, f"cannot read trainset: {exc.strerror}") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = TodoRow.model_validate(json.loads(line))
            apply_calls(row.state, row.calls)
        except (json.JSONDecodeError, ValidationError, ValueError) as exc:
            raise DataError(path, number, one_line(exc)) from exc
        rows.append(row)
    return rows


def apply_calls(state: TodoState, calls: list[GoldCall]) -> TodoState:
    """Run gold calls on a copy of ``state`` and return the state they leave.

    Raises:
        ValueError: when a gold call fails (the gold data is wrong).
    """
    toolbox = TODO.make_toolbox()
    for call in calls:
        execution = toolbox.execute(call.tool, call.arguments or {}, state)
        if not execution.outcome.ok:
            raise ValueError(
                f"gold call {call.tool}{call.arguments} fails: {execution.outcome.message}"
            )
        state = execution.state
    return state


def row_step(row: TodoRow) -> Step:
    """Turn a row into a standalone step (own start state, gold calls as ``expected``)."""
    return Step(
        id=row.id,
        message=row.message,
        start_state=row.state.model_copy(deep=True),
        conversation=row.conversation,
        expected={"calls": [c.model_dump() for c in row.calls]},
    )


def _dump(state: Any) -> Any:
    return state.model_dump() if isinstance(state, BaseModel) else (state or {})


def _normalise(state: Any) -> list[tuple[str, int, bool]]:
    tasks = TodoState.model_validate(_dump(state)).tasks
    return sorted((t.title.strip().lower(), t.priority, t.done) for t in tasks)


def _register() -> None:
    from freyr_dspy.benchmark import register_benchmark

    register_benchmark(TodoBenchmark())


_register()
