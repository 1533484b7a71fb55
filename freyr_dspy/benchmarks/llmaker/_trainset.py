"""The project's own LLMaker training rows (``trainsets/llmaker.jsonl``), loaded and checked.

One JSON object per line::

    {"id": "...", "request": "...", "conversation": "", "level": {<level file layout>},
     "expected": {"intents": ["add_enemy"], "assertions": [{"kind": "entity", ...}],
                  "calls": [{"tool": "add_enemy", "arguments": {...}}]}}

``expected.intents`` are the tools a correct program calls (in order, repeated per call;
``conversation`` when no tool is needed);
``expected.assertions`` are the declarative checks of ``assertions.py`` that score a step;
``expected.calls`` is one correct solution. Every row is checked when loaded: the level
and assertions must be valid, the intents must be tool names, the gold calls must succeed
and satisfy every assertion, and doing nothing must fail some assertion (unless the row
expects no change). Any problem is a ``DataError`` with ``path:line``. The rows are written
by the project and share no request with the benchmark's test set (a test checks that).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from freyr_dspy.benchmark import Episode, GoldCall, Step
from freyr_dspy.benchmarks.llmaker._assertions import Assertion, evaluate_assertions
from freyr_dspy.benchmarks.llmaker._functions import TOOL_NAMES, make_toolbox
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.errors import DataError
from freyr_dspy.prompting import CONVERSATION
from freyr_dspy.tools import Toolbox

__all__ = ["ASSERTIONS", "TRAINSET_FILE", "load_trainset", "train_episodes"]

TRAINSET_FILE = "llmaker.jsonl"
ASSERTIONS = TypeAdapter(list[Assertion])


class Expected(BaseModel):
    """The declarative outcome of a training row."""

    model_config = ConfigDict(extra="forbid")

    intents: list[str] = Field(default_factory=list)
    assertions: list[Assertion] = Field(min_length=1)
    calls: list[GoldCall] = Field(default_factory=list)


class TrainRow(BaseModel):
    """One line of ``trainsets/llmaker.jsonl``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    request: str = Field(min_length=1)
    conversation: str = ""
    level: Level = Field(default_factory=Level)
    expected: Expected


def load_trainset(path: str | Path) -> list[TrainRow]:
    """Read and check every row of a trainset file.

    Raises:
        DataError: ``path:line`` and what is wrong, for the first bad row.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(path, None, f"cannot read trainset: {exc.strerror}") from exc
    rows: list[TrainRow] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        row = _parse_row(path, number, line)
        if row.id in seen:
            raise DataError(path, number, f"duplicate id {row.id!r}")
        seen.add(row.id)
        problem = check_row(row)
        if problem:
            raise DataError(path, number, f"row {row.id!r}: {problem}")
        rows.append(row)
    if not rows:
        raise DataError(path, None, "the trainset has no rows")
    return rows


def _parse_row(path: Path, number: int, line: str) -> TrainRow:
    try:
        return TrainRow.model_validate(json.loads(line))
    except json.JSONDecodeError as exc:
        raise DataError(path, number, f"invalid JSON: {exc.msg}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(path, number, f"{where}: {first['msg']}") from exc


def check_row(row: TrainRow) -> str | None:
    """Return what is inconsistent in a row, or None when it is sound."""
    unknown = [n for n in row.expected.intents if n not in TOOL_NAMES and n != CONVERSATION]
    if unknown:
        return f"unknown tool names in intents: {', '.join(unknown)}"
    toolbox = _toolbox()
    level = row.level
    for call in row.expected.calls:
        execution = toolbox.execute(call.tool, call.arguments or {}, level)
        if not execution.outcome.ok:
            return f"gold call {call.tool} fails: {execution.outcome.message}"
        level = execution.state
    _, passed, failed = evaluate_assertions(row.expected.assertions, row.level, level)
    if not passed:
        return f"the gold calls fail assertions {failed}"
    if row.expected.calls and evaluate_assertions(row.expected.assertions, row.level, row.level)[1]:
        return "doing nothing already passes every assertion"
    return None


@lru_cache(maxsize=1)
def _toolbox() -> Toolbox:
    """One toolbox for checking every row (building one costs more than a row's check)."""
    return make_toolbox()


def train_episodes(trainsets_dir: Path) -> list[Episode]:
    """The rows of ``<trainsets_dir>/llmaker.jsonl`` as one-step episodes.

    Each step carries its ``start_state`` (the row's level as JSON) and ``expected`` (the
    row's intents, assertions and gold calls as JSON), so it stands alone as an example.

    Raises:
        DataError: for a missing or malformed trainset.
    """
    rows = load_trainset(trainsets_dir / TRAINSET_FILE)
    return [
        Episode(
            id=row.id,
            case="train",
            steps=(
                Step(
                    id=row.id,
                    message=row.request,
                    conversation=row.conversation,
                    start_state=row.level.model_dump(mode="json"),
                    expected=row.expected.model_dump(mode="json"),
                ),
            ),
        )
        for row in rows
    ]
