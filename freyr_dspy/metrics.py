"""DSPy metrics built from a benchmark's own step scoring, plus feedback text for GEPA.

Every benchmark already knows how to score one step (``Benchmark.score``). The optimizers
want DSPy's metric signature instead: ``metric(example, prediction, trace=None)``. This
module adapts one to the other, so a new benchmark gets compile support for free.

Examples carry the gold ``Step`` (``example.step``) next to the program inputs; the metric
scores the prediction against it from the state the step started in. Gold tool calls, when a
benchmark records them, follow one convention (see ``gold_calls``) so that the per-role
metrics, GEPA's feedback and the gold-labelled demos can read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import dspy
from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.benchmark import Benchmark, Step, StepScore
from freyr_dspy.prompting.parsing import CONVERSATION

__all__ = [
    "INPUT_FIELDS",
    "ROLE_METRICS",
    "BenchmarkMetric",
    "FeedbackMetric",
    "GoldCall",
    "Metric",
    "feedback_text",
    "gold_calls",
    "intent_set_metric",
    "step_example",
]

#: The program inputs of an example; everything else on it is gold data. ``toolbox`` is
#: None unless the example offers its own tools.
INPUT_FIELDS = ("message", "conversation", "state", "toolbox")


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


class GoldCall(BaseModel):
    """A call a correct program makes: a row of a trainset, and what the metrics compare.

    ``arguments`` left out of a trainset row is ``{}`` (a call without arguments); it is None
    only where the gold names the tool alone (``gold_calls``), and then goes unchecked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    arguments: dict[str, Any] | None = Field(default_factory=dict)


def step_example(step: Step) -> dspy.Example:
    """Turn a training step into a ``dspy.Example`` (inputs + the gold step).

    The step must carry its own ``start_state``: optimizers run examples in any order.
    """
    return dspy.Example(
        message=step.message,
        conversation=step.conversation,
        state=step.start_state,
        toolbox=step.toolbox,
        step=step,
    ).with_inputs(*INPUT_FIELDS)


def gold_calls(step: Step) -> list[GoldCall] | None:
    """Read the gold tool calls of a step, or None when the benchmark records none.

    Convention: ``expected["calls"]`` is a list of ``{"tool" | "name": str, "arguments" |
    "args": dict}``; ``expected["tools"]`` (names only) is accepted when arguments are not
    known. An empty list means "no tool: reply in conversation".
    """
    calls = step.expected.get("calls")
    if isinstance(calls, list):
        return [
            GoldCall(
                tool=str(c.get("tool") or c.get("name")),
                arguments=c.get("arguments", c.get("args")),
            )
            for c in calls
            if isinstance(c, dict)
        ]
    tools = step.expected.get("tools")
    if isinstance(tools, list):
        return [GoldCall(tool=str(t), arguments=None) for t in tools]
    return None


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
