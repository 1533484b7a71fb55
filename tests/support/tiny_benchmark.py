"""A tiny benchmark on the ``todo`` domain for the evaluation tests.

Two cases x two episodes. ``add`` episodes ask to add a task; ``done`` episodes start from a
list holding the task and ask to complete it. A step succeeds when the expected task exists
(and is done, where expected). Strategy ``lazy`` never calls a tool, so it fails the steps
that need one: the two strategies differ in a known way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pytest

from freyr_dspy.benchmarks import BENCHMARKS, Episode, EvalOptions, Step, StepScore
from freyr_dspy.domains._example import Task, TodoState
from freyr_dspy.errors import FakeLMError
from freyr_dspy.evaluation import StepRecord
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result
from freyr_dspy.strategies import STRATEGIES, FunctionStrategy, Run, StrategyModule
from freyr_dspy.testing import FakeCall, register_fake

NAME = "tiny-todo"


def _lazy(strategy: StrategyModule, run: Run) -> Result:
    reply = run.call(
        strategy.chat, conversation=run.conversation, message=run.message, state=run.state_text()
    )
    return run.result(reply.reply, [])


LAZY = FunctionStrategy("lazy", ("chat",), _lazy, "never calls a tool")


class TinyBenchmark:
    """Two cases (add, done), two episodes each; iterative mode chains add -> done."""

    name = NAME
    description = "tiny todo benchmark for tests"
    strategies = ("freyr", "lazy")

    def __init__(self) -> None:
        self.summarized: list[int] = []

    def episodes(self, options: EvalOptions) -> list[Episode]:
        items = ["milk", "bread"]
        if options.mode == "iterative":
            found = [
                Episode(
                    f"chain-{i}",
                    "chain",
                    (
                        Step("add", f"Add a task called {i}", TodoState(), expected={"title": i}),
                        Step(
                            "done",
                            f"Complete the task called {i}",
                            None,
                            expected={"title": i, "done": True},
                        ),
                    ),
                    stop_on_failure=True,
                )
                for i in items
            ]
        else:
            found = [
                Episode(
                    f"add-{i}",
                    "add",
                    (Step("s1", f"Add a task called {i}", TodoState(), expected={"title": i}),),
                )
                for i in items
            ]
            found += [
                Episode(
                    f"done-{i}",
                    "done",
                    (
                        Step(
                            "s1",
                            f"Complete the task called {i}",
                            TodoState(tasks=[Task(title=i)]),
                            expected={"title": i, "done": True},
                        ),
                    ),
                )
                for i in items
            ]
        return found[: options.limit] if options.limit else found

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        return FreyrProgram("todo", strategy=strategy, max_retries=1)

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        state: TodoState = prediction.result.state
        title = step.expected["title"]
        tasks = [t for t in state.tasks if t.title == title]
        ok = bool(tasks) and (not step.expected.get("done") or tasks[0].done)
        return StepScore(
            success=1.0 if ok else 0.0,
            metrics={"exists": float(bool(tasks))},
            failure_kind=None if ok else "domain",
            diagnostics={
                "expected": step.expected,
                "produced": [c.tool for c in prediction.result.calls],
            },
        )

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        return []

    def summarize(self, records: list[StepRecord]) -> dict[str, Any]:
        self.summarized.append(len(records))
        return {
            "records": len(records),
            "nested": {"mean": sum(r.success for r in records) / max(len(records), 1)},
        }


class CountingRules:
    """``fake/rules`` that counts its calls and can be told to fail after N calls."""

    def __init__(self, fail_after: int | None = None, error: type[BaseException] = FakeLMError):
        from freyr_dspy.testing._rules import RulesLM

        self.rules = RulesLM()
        self.calls: list[FakeCall] = []
        self.fail_after = fail_after
        self.error = error

    def __call__(self, call: FakeCall) -> Any:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise self.error("interrupted by the test")
        self.calls.append(call)
        return self.rules.answer(call)


def install(monkeypatch: pytest.MonkeyPatch) -> TinyBenchmark:
    """Register the tiny benchmark and the ``lazy`` strategy for one test."""
    benchmark = TinyBenchmark()
    monkeypatch.setitem(BENCHMARKS, NAME, benchmark)
    monkeypatch.setitem(STRATEGIES, "lazy", LAZY)
    return benchmark


def install_fake(name: str, counter: CountingRules) -> None:
    """Make ``fake/<name>`` answer through ``counter`` (shared by every LM built)."""
    from freyr_dspy.testing import FunctionLM

    register_fake(name, FunctionLM(counter))
