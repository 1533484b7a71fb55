from __future__ import annotations

import dspy
import pytest

from freyr_dspy.benchmark import GoldCall, Step, gold_calls, step_example
from freyr_dspy.benchmarks._todo import TodoBenchmark
from freyr_dspy.compiling._metrics import (
    ROLE_METRICS,
    BenchmarkMetric,
    FeedbackMetric,
    intent_set_metric,
)
from freyr_dspy.domains._example import Task, TodoState
from freyr_dspy.program import FreyrProgram, to_prediction
from freyr_dspy.schemas import CallRecord, Outcome, Result

STEP = Step(
    id="s1",
    message="Add a task called x with priority 2.",
    start_state=TodoState(),
    expected={"calls": [{"tool": "add_task", "arguments": {"title": "x", "priority": 2}}]},
)


def _prediction(intents: list[str], calls: list[CallRecord], state: TodoState) -> dspy.Prediction:
    return to_prediction(
        Result(reply="r", strategy="freyr", intents=intents, calls=calls, state=state)
    )


GOOD = _prediction(
    ["add_task"],
    [
        CallRecord(
            tool="add_task",
            arguments={"title": "x", "priority": 2},
            outcome=Outcome(ok=True, message="Added task 'x'."),
        )
    ],
    TodoState(tasks=[Task(title="x", priority=2)]),
)
WRONG_ARGS = _prediction(
    ["add_task"],
    [
        CallRecord(
            tool="add_task",
            arguments={"title": "x"},
            outcome=Outcome(ok=True, message="Added task 'x'."),
        )
    ],
    TodoState(tasks=[Task(title="x", priority=1)]),
)
NO_TOOL = _prediction(["conversation"], [], TodoState())


@pytest.fixture
def metric() -> BenchmarkMetric:
    return BenchmarkMetric(TodoBenchmark(), FreyrProgram("todo").coerce_state)


def test_metric_uses_the_benchmark_score(metric: BenchmarkMetric) -> None:
    example = step_example(STEP)
    assert metric(example, GOOD) == 1.0
    assert metric(example, WRONG_ARGS) == 0.0
    assert metric(example, NO_TOOL) == 0.0


def test_metric_is_strict_bool_while_bootstrapping(metric: BenchmarkMetric) -> None:
    example = step_example(STEP)
    assert metric(example, GOOD, trace=[]) is True
    assert metric(example, WRONG_ARGS, trace=[]) is False


def test_example_keeps_inputs_and_gold_apart() -> None:
    example = step_example(STEP)
    assert set(example.inputs().keys()) == {"message", "conversation", "state", "toolbox"}
    assert example.toolbox is None  # the program's own tools; a row may bring others
    assert example.step is STEP


def test_feedback_names_what_went_wrong(metric: BenchmarkMetric) -> None:
    feedback = FeedbackMetric(metric.benchmark, metric.coerce_state)
    example = step_example(STEP)
    good = feedback(example, GOOD, None, None, None)
    assert good.score == 1.0 and good.feedback.startswith("Correct")
    bad = feedback(example, NO_TOOL, None, "intent.predict", None)
    assert bad.score == 0.0
    assert "Expected tools: add_task" in bad.feedback and "conversation" in bad.feedback
    assert "arguments" not in bad.feedback  # the intent role hears about intents only
    wrong = feedback(example, WRONG_ARGS, None, "parameters.predict", None)
    assert '"priority": 2' in wrong.feedback and "Called add_task" in wrong.feedback


def test_gold_call_conventions() -> None:
    assert gold_calls(STEP) == [GoldCall(tool="add_task", arguments={"title": "x", "priority": 2})]
    by_name = Step(id="a", message="m", expected={"calls": [{"name": "t", "args": {"a": 1}}]})
    assert gold_calls(by_name) == [GoldCall(tool="t", arguments={"a": 1})]
    names_only = Step(id="b", message="m", expected={"tools": ["t", "u"]})
    assert gold_calls(names_only) == [
        GoldCall(tool="t", arguments=None),
        GoldCall(tool="u", arguments=None),
    ]
    assert gold_calls(Step(id="c", message="m", expected={"calls": []})) == []
    assert gold_calls(Step(id="d", message="m", expected={"case": "T1"})) is None


def test_intent_set_metric() -> None:
    example = step_example(STEP)
    assert intent_set_metric(example, GOOD) == 1.0
    assert intent_set_metric(example, NO_TOOL) == 0.0
    assert intent_set_metric(example, GOOD, trace=[]) is True
    chat = step_example(Step(id="c", message="hi", start_state=TodoState(), expected={"calls": []}))
    assert intent_set_metric(chat, NO_TOOL) == 1.0
    assert intent_set_metric(chat, GOOD) == 0.0
    unknown = step_example(Step(id="u", message="hi", start_state=TodoState()))
    assert intent_set_metric(unknown, GOOD) == 0.0
    assert ROLE_METRICS["intent"] is intent_set_metric
