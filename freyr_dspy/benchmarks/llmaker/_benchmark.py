"""Benchmark ``llmaker``: FREYR's five LLMaker test cases (T1-T5, 50 steps).

Two modes (``EvalOptions.mode``):

* ``bootstrap`` - one episode per step, starting from the level the test set gives for it
  (``levels/T<n>/step<k>.json``); the paper's "single step" evaluation.
* ``iterative`` - one episode per test case from the empty level, each step continuing
  from the previous result and the episode stopping at the first failed step.

A step succeeds when its design check holds (``steps.py``). ``score`` also reports the
domain/design/intent sub-scores, a failure kind (``model``, ``parse``, ``retries``,
``domain``, ``design``) and diagnostics with the expected and produced intents. Training
rows (``trainset.py``) are scored by the same ``score`` through their assertions.

Options read from ``EvalOptions.extra``: ``state_view`` (``original``/``rich``),
``max_hp`` (default 1000), ``max_retries`` (default 3), ``catalog_level``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import (
    Episode,
    EvalOptions,
    Step,
    StepScore,
    register_benchmark,
)
from freyr_dspy.benchmarks.llmaker._assertions import evaluate_assertions
from freyr_dspy.benchmarks.llmaker._config import BENCHMARK_CONFIG, LevelConfig
from freyr_dspy.benchmarks.llmaker._domain import LLMAKER
from freyr_dspy.benchmarks.llmaker._functions import make_toolbox
from freyr_dspy.benchmarks.llmaker._levels import load_level
from freyr_dspy.benchmarks.llmaker._steps import evaluate_step, get_step_check
from freyr_dspy.benchmarks.llmaker._testset import TestStep, load_test_steps
from freyr_dspy.benchmarks.llmaker._trainset import ASSERTIONS, train_episodes
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result


class LLMakerBenchmark:
    """The LLMaker benchmark (see the module docstring)."""

    name = "llmaker"
    description = "FREYR LLMaker: Dungeon Despair level edits, 5 test cases, 50 steps"
    strategies: tuple[str, ...] = ("freyr", "native", "prompted", "nlt", "gated")

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """Load the test episodes of the chosen mode from the data directory.

        Raises:
            ConfigError: when the data directory has no LLMaker test set.
            DataError: for malformed test data.
        """
        steps = load_test_steps(options.data_dir)
        if options.mode == "iterative":
            episodes = _iterative(steps)
        else:
            episodes = [
                Episode(
                    id=s.id,
                    case=s.case,
                    steps=(
                        Step(
                            id=s.id,
                            message=s.request,
                            start_state=s.start.model_dump(mode="json"),
                            expected={"case": s.case, "step": s.step},
                        ),
                    ),
                )
                for s in steps
            ]
        return episodes[: options.limit] if options.limit else episodes

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """Build a fresh program on the ``llmaker`` domain with the configured limits."""
        extra = options.extra
        config = LevelConfig(max_hp=float(extra.get("max_hp", BENCHMARK_CONFIG.max_hp)))
        return FreyrProgram(
            LLMAKER,
            strategy=strategy,
            toolbox=make_toolbox(config),
            max_retries=int(extra.get("max_retries", 3)),
            state_view=extra.get("state_view") or "original",
            catalog_level=extra.get("catalog_level", "brief"),
        )

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Score one step: the step's checks (test) or its assertions (training rows)."""
        result: Result = prediction.result
        old = load_level(before, source=f"step {step.id}")
        new = load_level(result.state, source=f"step {step.id} result") if result.state else old
        expected_intents, deviation = _expected_intents(step)
        if "assertions" in step.expected:
            assertions = ASSERTIONS.validate_python(step.expected["assertions"])
            domain, design, failed = evaluate_assertions(assertions, old, new)
            intents_ok = list(result.intents) == list(step.expected.get("intents", []))
            details: dict[str, Any] = {"failed_assertions": failed}
        else:
            check = get_step_check(step.expected["case"], int(step.expected["step"]))
            domain, design = evaluate_step(check, old, new)
            intents_ok = check.intents.holds(result.intents)
            details = {}
        return StepScore(
            success=float(design),
            metrics={
                "domain": float(domain),
                "design": float(design),
                "intents": float(intents_ok),
            },
            failure_kind=failure_kind(domain, design, result),
            diagnostics={
                "expected_intents": expected_intents,
                "produced_intents": list(result.intents),
                "calls": [f"{c.tool}:{'ok' if c.outcome.ok else 'error'}" for c in result.calls],
                "errors": [c.outcome.message for c in result.calls if not c.outcome.ok],
                "domain": domain,
                "design": design,
                "deviation": deviation,
                **details,
            },
        )

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """The project's training rows (``trainsets/llmaker.jsonl``) as one-step episodes.

        Raises:
            DataError: for a missing or malformed trainset, with ``path:line``.
        """
        episodes = train_episodes(trainsets_dir)
        return episodes[: options.limit] if options.limit else episodes


def failure_kind(domain: bool, design: bool, result: Result) -> str | None:
    """Classify a failed step: model, parse, gave_up, retries, domain or design (None if passed)."""
    if design:
        return None
    failure = result.failure
    if failure is not None and failure.model_failed:
        return "model"
    if not result.calls and failure is not None and failure.kind in ("unknown_tool", "parse"):
        return "parse"
    failed_calls = [c for c in result.calls if not c.outcome.ok]
    if not domain and failed_calls:
        return "gave_up" if all(c.gave_up for c in failed_calls) else "retries"
    return "domain" if not domain else "design"


def _expected_intents(step: Step) -> tuple[Any, str]:
    if "assertions" in step.expected:
        return list(step.expected.get("intents", [])), ""
    check = get_step_check(step.expected["case"], int(step.expected["step"]))
    return check.intents.describe(), check.deviation


def _iterative(steps: list[TestStep]) -> list[Episode]:
    """One episode per test case; only its first step has a start state."""
    cases: dict[str, list[Step]] = {}
    for s in steps:
        start = s.start.model_dump(mode="json") if s.step == 1 else None
        cases.setdefault(s.case, []).append(
            Step(
                id=s.id,
                message=s.request,
                start_state=start,
                expected={"case": s.case, "step": s.step},
            )
        )
    return [
        Episode(id=case, case=case, steps=tuple(case_steps), stop_on_failure=True)
        for case, case_steps in cases.items()
    ]


LLMAKER_BENCHMARK = LLMakerBenchmark()
register_benchmark(LLMAKER_BENCHMARK)

__all__ = ["LLMAKER_BENCHMARK", "failure_kind"]
