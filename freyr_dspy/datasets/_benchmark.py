"""``ToolCallBenchmark``: a user's tools and examples as a benchmark like any built-in one.

``freyr eval``, ``freyr compile`` and ``freyr search`` run benchmarks; this one is made of
a tool-call dataset (``freyr_dspy.datasets._format``) instead of a plugin. Each labelled
example is one single-step episode, grouped in reports by its category; its score is the
exact-call check (``freyr_dspy.datasets._checker``), whose sentences are also GEPA's
feedback. Calls are recorded, not executed, unless the dataset is built with
``execute=True`` and the tools have functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import Episode, EvalOptions, Step, StepScore, step_example
from freyr_dspy.datasets._checker import check_calls, render_call
from freyr_dspy.datasets._format import (
    CallExample,
    ExpectedCall,
    load_numbered_examples,
    parse_examples,
)
from freyr_dspy.datasets._replies import invented_numbers, replaying_toolbox
from freyr_dspy.datasets._toolboxes import check_gold, toolbox_of
from freyr_dspy.errors import DataError
from freyr_dspy.program import FreyrProgram, render_conversation
from freyr_dspy.schemas import Result
from freyr_dspy.tools import Toolbox

__all__ = [
    "BENCHMARK_NAME",
    "Row",
    "ToolCallBenchmark",
    "read_rows",
    "rows_from",
]

#: The name the benchmark of a user's files is registered and recorded under.
BENCHMARK_NAME = "calls"

#: Strategies that work on any toolbox (the CallNavi ones need CallNavi's own data).
STRATEGIES = ("freyr", "native", "prompted", "nlt", "gated")


@dataclass(frozen=True)
class Row:
    """A checked example and the tools it is asked against."""

    example: CallExample
    toolbox: Toolbox
    #: Where the row came from, for messages: ``file:line``.
    where: str = ""


def read_rows(
    path: str | Path, boxes: Mapping[str, Toolbox], *, labelled_only: bool = True
) -> list[Row]:
    """Read a JSONL dataset and check every row against its tools.

    Args:
        path: the examples file.
        boxes: the file-level toolboxes (``load_tools_file``), by name.
        labelled_only: refuse rows without ``calls`` (everything but ``freyr label`` wants
            labelled rows).

    Raises:
        DataError: ``path:line`` and the first problem of the first bad row.
    """
    return [
        _row(example, boxes, path, number, labelled_only)
        for number, example in load_numbered_examples(path)
    ]


def rows_from(
    examples: Iterable[Mapping[str, Any] | CallExample | dspy.Example],
    boxes: Mapping[str, Toolbox],
    *,
    source: str = "examples",
    labelled_only: bool = True,
) -> list[Row]:
    """Check in-memory examples (dicts, ``CallExample``s or ``dspy.Example``s).

    Raises:
        DataError: ``source:N`` (1-based position) and the first problem.
    """
    plain = [dict(e.toDict()) if isinstance(e, dspy.Example) else e for e in examples]
    checked = parse_examples(plain, source)
    return [
        _row(example, boxes, source, number, labelled_only)
        for number, example in enumerate(checked, 1)
    ]


def _row(
    example: CallExample,
    boxes: Mapping[str, Toolbox],
    source: object,
    number: int,
    labelled_only: bool,
) -> Row:
    if labelled_only and not example.labelled:
        raise DataError(
            source, number, "no calls: label the row (calls: [] for no tool) or run freyr label"
        )
    try:
        toolbox = toolbox_of(example, boxes)
        example = check_gold(example, toolbox)
    except ValueError as exc:
        raise DataError(source, number, str(exc)) from exc
    return Row(example, toolbox, f"{source}:{number}")


@dataclass
class ToolCallBenchmark:
    """Examples scored by the exact-call check; train rows feed ``freyr compile``.

    Args:
        rows: what ``freyr eval`` scores (the test episodes).
        train_rows: what ``freyr compile`` learns from (default: ``rows``).
        dev_rows: compile's dev set, when given apart (else a split of ``train_rows``).
        toolbox: the tools the rows share, which programs are built with; rows asked
            against other tools (their own, or another toolbox of the file) carry theirs.
        execute: run tools that have functions instead of recording their calls.
    """

    rows: Sequence[Row]
    train_rows: Sequence[Row] | None = None
    dev_rows: Sequence[Row] | None = None
    toolbox: Toolbox | None = None
    execute: bool = False
    name: str = BENCHMARK_NAME
    description: str = "your tools and examples, scored by the exact-call check"
    strategies: tuple[str, ...] = STRATEGIES

    def __post_init__(self) -> None:
        self._offered_boxes: dict[int, Toolbox] = {}
        #: The program's tools: the shared ones as offered (spec-only unless executing).
        self.program_toolbox = self._offered(
            self.toolbox if self.toolbox is not None else Toolbox([])
        )

    @property
    def tool_agnostic(self) -> bool:
        """Whether some training row is asked against other tools than the shared ones."""
        return any(not self._shared(row) for row in self._train())

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """One single-step episode per scored row, grouped by category."""
        episodes = [self.episode(row) for row in self.rows]
        return episodes[: options.limit] if options.limit else episodes

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """The training rows as episodes (``trainsets_dir`` is not used: the rows are given)."""
        return [self.episode(row) for row in self._train()]

    def devset(self) -> list[dspy.Example] | None:
        """The separate dev rows as compile's examples, or None to split the train rows."""
        if self.dev_rows is None:
            return None
        return [step_example(self.step(row)) for row in self.dev_rows]

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """A plain tool-use program on the shared tools."""
        return FreyrProgram(toolbox=self.program_toolbox, strategy=strategy)

    def episode(self, row: Row) -> Episode:
        """The row as a one-step episode, grouped in reports by its category."""
        return Episode(
            id=str(row.example.id),
            case=row.example.kind,
            steps=(self.step(row),),
            toolbox=row.example.toolbox or "",
        )

    def step(self, row: Row) -> Step:
        """The row as a standalone step; gold calls as ``expected`` (``benchmark.gold_calls``)."""
        example = row.example
        calls = example.calls or []
        expected: dict[str, Any] = {
            "calls": [{"name": c.name, "arguments": c.plain_arguments()} for c in calls],
            "checks": [c.as_json() for c in calls],
            "ordered": example.ordered,
        }
        if example.reply:
            expected["reply"] = example.reply
        replies = example.results is not None
        if replies:
            expected["results"] = True
        return Step(
            id=str(example.id),
            message=example.message,
            start_state=example.state,
            conversation=render_conversation(example.conversation_turns()),
            expected=expected,
            # NOTE: always the offered copy: the program's own tools may have functions,
            # which only ``execute=True`` may run. A reply row's tools return its results.
            toolbox=(
                replaying_toolbox(row.toolbox, example.results or [])
                if replies
                else self._offered(row.toolbox)
            ),
            # The score reads the calls: a reply after them would cost a model call for
            # nothing, except on a reply row, whose reply is checked too.
            calls_only=not replies,
        )

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Exact-call success, whether the right tools were named, and what was wrong."""
        result: Result = prediction.result
        expected = [ExpectedCall.model_validate(c) for c in step.expected.get("checks", [])]
        made = [(c.tool, c.arguments) for c in result.calls if c.outcome.ok]
        toolbox = step.toolbox if step.toolbox is not None else self.program_toolbox
        check = check_calls(expected, made, toolbox, ordered=step.expected.get("ordered", False))
        kind = check.kind
        if kind is not None and result.failure is not None and result.failure.model_failed:
            kind = "model"
        diagnostics: dict[str, Any] = {
            "expected": [render_call(c.name, c.plain_arguments()) for c in expected],
            "produced": [render_call(name, arguments) for name, arguments in made],
        }
        invented = _invented(step, result) if step.expected.get("results") else []
        if invented:
            diagnostics["invented"] = invented
            diagnostics["reply"] = result.reply
            kind = kind or "invented-reply"
        if not check.ok:
            diagnostics["feedback"] = check.feedback
        return StepScore(
            success=float(check.ok and not invented),
            metrics={
                "tools": float(check.names_ok),
                "abstained": float(not made),
                "invented_reply": float(bool(invented)),
            },
            failure_kind=kind,
            diagnostics=diagnostics,
        )

    def _train(self) -> Sequence[Row]:
        return self.rows if self.train_rows is None else self.train_rows

    def _shared(self, row: Row) -> bool:
        return self.toolbox is not None and row.toolbox is self.toolbox

    def _offered(self, toolbox: Toolbox) -> Toolbox:
        """Tools as offered to the program: spec-only copies unless executing (made once)."""
        if self.execute:
            return toolbox
        if id(toolbox) not in self._offered_boxes:
            self._offered_boxes[id(toolbox)] = toolbox.spec_only()
        return self._offered_boxes[id(toolbox)]


def _invented(step: Step, result: Result) -> list[str]:
    """The numbers a reply row's reply states that no request text or returned result gives."""
    returned = [call.outcome.message for call in result.calls if call.outcome.ok]
    state = json.dumps(step.start_state, default=str) if step.start_state is not None else ""
    return invented_numbers(result.reply, [step.message, step.conversation, state, *returned])
