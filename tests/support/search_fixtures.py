"""Fakes with per-model skill tables and a tiny benchmark, for the search tests.

``fake/intent-pro`` recognises intents right and writes wrong arguments; ``fake/param-pro``
does the reverse; so the only assignment that solves the benchmark is intent=intent-pro,
parameters=param-pro. ``fake/broken`` fails every call like a server that is down.

Imported by the tests and by the worker subprocesses of the PostgreSQL test, which call
``install()`` before running the CLI.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import Episode, EvalOptions, Step, StepScore
from freyr_dspy.benchmarks import register_benchmark
from freyr_dspy.domains._example import TODO, Task, TodoState
from freyr_dspy.program import FreyrProgram
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake

INTENT_PRO = "fake/intent-pro"
PARAM_PRO = "fake/param-pro"
BROKEN = "fake/broken"

_START = TodoState(tasks=[Task(title="pay rent", priority=5), Task(title="call mum")])

#: message -> (tool, arguments, titles of the tasks after a correct call)
CASES: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "Add a task called buy milk with priority 2.": (
        "add_task",
        {"title": "buy milk", "priority": 2},
        ["pay rent", "call mum", "buy milk"],
    ),
    "Remove the task called call mum.": ("remove_task", {"title": "call mum"}, ["pay rent"]),
    "Please add book dentist to my list.": (
        "add_task",
        {"title": "book dentist"},
        ["pay rent", "call mum", "book dentist"],
    ),
}


def _case(call: FakeCall) -> tuple[str, dict[str, Any], list[str]]:
    return CASES[call.inputs["message"]]


def _shared(call: FakeCall) -> dict[str, Any] | None:
    if call.role == "summary":
        return {"reply": "Done."}
    if call.role == "chat":
        return {"reply": "Hello."}
    return None


def intent_pro(call: FakeCall) -> dict[str, Any] | None:
    """Right intents, empty (invalid) titles."""
    if call.role == "intent":
        return {"intents": [_case(call)[0]]}
    if call.role == "parameters":
        return {"arguments": {"title": ""}}
    return _shared(call)


def param_pro(call: FakeCall) -> dict[str, Any] | None:
    """Wrong intents (always list_tasks), right arguments for the tool asked."""
    if call.role == "intent":
        return {"intents": ["list_tasks"]}
    if call.role == "parameters":
        tool, arguments, _ = _case(call)
        return {"arguments": arguments if tool in call.inputs["tool"] else {}}
    return _shared(call)


def broken(call: FakeCall) -> dict[str, Any] | None:
    """Fail like a provider that is down."""
    raise ConnectionError("connection refused (fake server down)")


class SkillBenchmark:
    """Three one-step to-do requests scored on the task titles left."""

    name = "skills"
    description = "search test benchmark on the todo domain"
    strategies: tuple[str, ...] = ("freyr",)

    def _episodes(self, options: EvalOptions) -> list[Episode]:
        episodes = [
            Episode(
                id=f"case-{i}",
                case="skills",
                steps=(
                    Step(
                        id=f"case-{i}",
                        message=message,
                        start_state=_START.model_copy(deep=True),
                        expected={"calls": [{"tool": tool, "arguments": args}], "titles": titles},
                    ),
                ),
            )
            for i, (message, (tool, args, titles)) in enumerate(CASES.items())
        ]
        return episodes[: options.limit] if options.limit else episodes

    def episodes(self, options: EvalOptions) -> list[Episode]:
        return self._episodes(options)

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        return self._episodes(options)

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        return FreyrProgram(TODO, strategy=strategy)

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        titles = [t.title for t in prediction.result.state.tasks]
        return StepScore(success=float(titles == step.expected["titles"]))


ENGINES: dict[str, FunctionLM] = {}


def _slow(fn: Any, delay: float) -> Any:
    def answer(call: FakeCall) -> dict[str, Any] | None:
        time.sleep(delay)
        return fn(call)

    return answer


def install(delay: float = 0.0) -> None:
    """Register the fakes (shared engines, so tests can count calls) and the benchmark.

    ``delay`` seconds per call make trials last long enough for two workers to overlap.
    """
    for model_id, fn in ((INTENT_PRO, intent_pro), (PARAM_PRO, param_pro), (BROKEN, broken)):
        ENGINES[model_id] = FunctionLM(_slow(fn, delay) if delay else fn)
        register_fake(model_id.split("/", 1)[1], ENGINES[model_id])
    register_benchmark(SkillBenchmark())


def uninstall() -> None:
    """Remove the fakes and the benchmark."""
    from freyr_dspy.benchmarks import BENCHMARKS

    for model_id in (INTENT_PRO, PARAM_PRO, BROKEN):
        unregister_fake(model_id.split("/", 1)[1])
    BENCHMARKS.pop(SkillBenchmark.name, None)


def lm_calls() -> int:
    """How many LM calls the fakes answered so far."""
    return sum(len(engine.calls) for engine in ENGINES.values())


def run_cli() -> int:
    """Entry point of a worker subprocess: install the fakes, run ``freyr``."""
    from freyr_dspy.cli import main

    install(delay=float(os.environ.get("FAKE_DELAY", "0")))
    return main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(run_cli())
