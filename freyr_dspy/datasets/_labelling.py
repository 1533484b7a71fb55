"""Label examples that have no ``calls`` with a teacher model's calls.

Most users have real messages but no gold calls. A stronger model (the 1.5B for a 0.5B
student, or any litellm model) runs each unlabelled row through a program; the calls it made
that its tools accepted become the row's ``calls`` (``[]`` when it answered in words). A
row whose teacher made a call the tools refused (unknown tool, arguments that do not fit the
schema) is dropped, not guessed at: ``freyr label`` writes the rest for the user to review.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from freyr_dspy.datasets._benchmark import Row
from freyr_dspy.datasets._format import ExpectedCall
from freyr_dspy.datasets._toolboxes import check_gold
from freyr_dspy.errors import ToolError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result

__all__ = ["label_rows"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Labelling:
    """Rows with their calls (given or labelled), and the rows the teacher could not label."""

    rows: tuple[Row, ...]
    labelled: int
    #: (row id, why) of every dropped row.
    dropped: tuple[tuple[str, str], ...] = ()


def label_rows(
    rows: Sequence[Row],
    teacher: FreyrProgram,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Labelling:
    """Label the rows without calls with ``teacher``'s accepted calls; keep labelled rows.

    Args:
        rows: checked rows, some without ``calls``.
        teacher: a program with the teacher's models; each row runs on the row's own tools
            (spec-only: nothing is executed).
        progress: called with (rows done, rows to label).
    """
    todo = [row for row in rows if not row.example.labelled]
    kept: list[Row] = []
    dropped: list[tuple[str, str]] = []
    done = 0
    for row in rows:
        if row.example.labelled:
            kept.append(row)
            continue
        labelled, reason = _label(row, teacher)
        if labelled is None:
            dropped.append((str(row.example.id), reason))
            logger.info("dropped %s: %s", row.example.id, reason)
        else:
            kept.append(labelled)
        done += 1
        if progress is not None:
            progress(done, len(todo))
    return Labelling(tuple(kept), labelled=len(todo) - len(dropped), dropped=tuple(dropped))


def _label(row: Row, teacher: FreyrProgram) -> tuple[Row | None, str]:
    example = row.example
    result: Result = teacher(
        message=example.message,
        conversation=example.conversation_turns(),
        state=example.state,
        toolbox=row.toolbox.spec_only(),
    ).result
    if result.failure is not None and result.failure.model_failed:
        return None, f"the teacher's model failed: {result.failure.detail}"
    refused = [c for c in result.calls if not c.outcome.ok]
    if refused:
        return None, f"the tools refused the teacher's call: {refused[0].outcome.message}"
    try:
        calls = [_coerced(c.tool, c.arguments, row) for c in result.calls]
        checked = check_gold(example.model_copy(update={"calls": calls}), row.toolbox)
    except ValueError as exc:
        return None, str(exc)
    return replace(row, example=checked), ""


def _coerced(name: str, arguments: dict[str, Any], row: Row) -> ExpectedCall:
    """The call with its values as the schema types them ("135" -> 135), no defaults added.

    Raises:
        ValueError: the tool is unknown or refuses the arguments.
    """
    tool = row.toolbox.resolve(name)
    if tool is None:
        raise ValueError(f"the teacher called an unknown tool {name!r}")
    try:
        validated = tool.validate_arguments(dict(arguments))
    except ToolError as exc:
        raise ValueError(str(exc)) from exc
    given = {key: validated[key] for key in arguments if key in validated}
    return ExpectedCall(name=tool.name, arguments=given)
