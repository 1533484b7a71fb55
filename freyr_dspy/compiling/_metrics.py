"""DSPy metrics built from a benchmark's own step scoring, plus feedback text for GEPA.

Every benchmark already knows how to score one step (``Benchmark.score``). The optimizers
want DSPy's metric signature instead: ``metric(example, prediction, trace=None)``. This
module adapts one to the other, so a new benchmark gets compile support for free.

Examples carry the gold ``Step`` (``example.step``) next to the program inputs; the metric
scores the prediction against it from the state the step started in (``benchmark.step_example``
makes those examples; ``benchmark.gold_calls`` reads a step's gold tool calls).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import dspy

from freyr_dspy.benchmark import Benchmark, Step, StepScore, gold_calls
from freyr_dspy.prompting import CONVERSATION

__all__ = ["ROLE_METRICS", "BenchmarkMetric", "FeedbackMetric", "intent_set_metric"]


class Metric(Protocol):
    """DSPy's metric signature (GEPA passes the two extra arguments)."""

    def __call__(
        self,
        example: dspy.Example,
        prediction: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> Any:
        """Score one prediction."""
        ...


class BenchmarkMetric:
    """``metric(example, prediction, trace=None)`` from ``benchmark.score``.

    Returns the step's success in [0, 1]; while an optimizer bootstraps (``trace`` is not
    None) it returns a strict bool, so only fully correct traces become demos.

    Args:
        benchmark: the benchmark whose ``score`` judges a step.
        coerce_state: turns an example's ``state`` into the domain state the step starts
            from (``FreyrProgram.coerce_state``).
    """

    def __init__(self, benchmark: Benchmark, coerce_state: Callable[[Any], Any]) -> None:
        self.benchmark = benchmark
        self.coerce_state = coerce_state

    def score(self, example: dspy.Example, prediction: dspy.Prediction) -> StepScore:
        """Score a prediction with the benchmark's own step scoring."""
        return self.benchmark.score(example.step, self.coerce_state(example.state), prediction)

    def __call__(
        self,
        example: dspy.Example,
        prediction: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> float | bool:
        """Return the success of the step (a bool while bootstrapping)."""
        success = self.score(example, prediction).success
        return success >= 1.0 if trace is not None else success


class FeedbackMetric(BenchmarkMetric):
    """GEPA's metric: the same score plus feedback text about what went wrong.

    When GEPA asks about one predictor (``pred_name``), the feedback speaks to that role:
    the intent role hears which tools were expected, the parameters role which arguments.
    """

    def __call__(
        self,
        example: dspy.Example,
        prediction: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> dspy.Prediction:
        """Return ``dspy.Prediction(score=..., feedback=...)``."""
        score = self.score(example, prediction)
        text = feedback_text(example.step, score, prediction, pred_name)
        return dspy.Prediction(score=score.success, feedback=text)


def feedback_text(
    step: Step, score: StepScore, prediction: dspy.Prediction, pred_name: str | None = None
) -> str:
    """Explain a scored step in a few plain sentences (for GEPA's reflection model)."""
    if score.success >= 1.0:
        return "Correct: the request was handled as expected."
    result = prediction.get("result")
    lines = [f"Incorrect (failure kind: {score.failure_kind or 'unknown'})."]
    gold = gold_calls(step)
    role = (pred_name or "").split(".")[0]
    if gold is not None and role in {"", "intent"}:
        expected = [c.tool for c in gold] or [CONVERSATION]
        lines.append(
            f"Expected tools: {', '.join(expected)}; "
            f"recognised intents: {', '.join(prediction.get('intents') or []) or 'none'}."
        )
    if gold is not None and role in {"", "parameters"}:
        lines.extend(
            f"Expected {c.tool} arguments: {json.dumps(c.arguments)}."
            for c in gold
            if c.arguments is not None
        )
    for call in getattr(result, "calls", []) or []:
        lines.append(
            f"Called {call.tool} with {json.dumps(call.arguments, default=str)}: "
            f"{call.outcome.render()}"
        )
    if getattr(result, "failure", None):
        lines.append(f"Failure: {result.failure}.")
    if score.diagnostics.get("feedback"):  # a benchmark's own account of what was wrong
        lines.append(f"What was wrong: {score.diagnostics['feedback']}.")
    elif score.diagnostics:
        lines.append("Diagnostics: " + json.dumps(score.diagnostics, default=str)[:400])
    return "\n".join(lines)


def intent_set_metric(
    example: dspy.Example, prediction: dspy.Prediction, trace: Any = None
) -> float | bool:
    """Per-role metric of the intent role: are the recognised tools exactly the gold set?

    ``conversation`` is the empty set. Steps without gold calls score 0: there is nothing
    to compare with, and a metric that cannot fail would only flatter the program.
    """
    gold = gold_calls(example.step)
    if gold is None:
        return False if trace is not None else 0.0
    recognised = {i for i in prediction.get("intents") or [] if i != CONVERSATION}
    correct = recognised == {c.tool for c in gold}
    return correct if trace is not None else float(correct)


#: Per-role metrics: role id -> metric over whole-program predictions.
ROLE_METRICS: dict[str, Callable[..., float | bool]] = {"intent": intent_set_metric}
