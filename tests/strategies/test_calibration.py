"""Calibrated choice of the plan's first tool (``freyr+calibrate``), on scoring fakes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from freyr_dspy.backends._llamacpp_scoring import ContinuationScores
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._calibration import BIAS_WEIGHT, CONTENT_FREE_MESSAGE
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.testing import Answer, ScriptedLM

LEAD = '{"intents": ["'
MESSAGE = "Tick off buy milk"


class ScoringLM(ScriptedLM):
    """A scripted fake whose engine also scores names: ``given`` with the user's message,
    ``prior`` with the content-free one (names not listed score -20)."""

    def __init__(
        self,
        table: Mapping[str, Mapping[str, Answer]],
        given: dict[str, float],
        prior: dict[str, float],
    ) -> None:
        super().__init__(table)
        self.given, self.prior = given, prior
        self.scored: list[list[dict[str, Any]]] = []

    def score_continuations(
        self, messages: list[dict[str, Any]], continuations: Sequence[str]
    ) -> ContinuationScores:
        self.scored.append(messages)
        content_free = f"{CONTENT_FREE_MESSAGE}" in messages[-1]["content"] and (
            MESSAGE not in messages[-1]["content"]
        )
        table = self.prior if content_free else self.given
        names = [text.removeprefix(LEAD) for text in continuations]
        return ContinuationScores(
            tuple(table.get(name, -20.0) for name in names), prompt_tokens=100, evaluated=10
        )


@pytest.fixture
def program(freyr_on_fake: Callable[..., FreyrProgram]) -> Callable[..., FreyrProgram]:
    """Build a todo program with ``freyr+calibrate`` or not over one fake for every role."""

    def make(engine: ScriptedLM, calibrate: bool = True) -> FreyrProgram:
        return freyr_on_fake(engine, calibrate=calibrate)

    return make


SCRIPT: dict[str, dict[str, Answer]] = {
    "intent": {"*": {"intents": ["add_task"]}},
    "parameters": {"*": {"arguments": {"title": "buy milk"}}},
    "summary": {"*": {"reply": "Done."}},
    "chat": {"*": {"reply": "Hello."}},
}
# add_task is likelier with the message, but far likelier still without one: a bias.
GIVEN = {"add_task": -0.5, "complete_task": -1.5}
PRIOR = {"add_task": -0.2, "complete_task": -6.0}


def test_the_first_tool_is_the_likeliest_once_the_models_bias_is_taken_out(program: Any) -> None:
    engine = ScoringLM(SCRIPT, GIVEN, PRIOR)
    result = program(engine)(message=MESSAGE).result
    assert GIVEN["complete_task"] - BIAS_WEIGHT * PRIOR["complete_task"] > (
        GIVEN["add_task"] - BIAS_WEIGHT * PRIOR["add_task"]
    )
    assert result.intents == ["complete_task"]
    assert [call.tool for call in result.calls] == ["complete_task"]
    # the same prompt twice: with the user's message, then with the content-free one
    with_message, content_free = (messages[-1]["content"] for messages in engine.scored)
    assert MESSAGE in with_message and MESSAGE not in content_free
    assert content_free == with_message.replace(MESSAGE, CONTENT_FREE_MESSAGE)
    # both scorings are the intent role's cost
    intent = result.usage["intent"]
    assert (intent.lm_calls, intent.input_tokens - intent.cached_input_tokens) >= (3, 20)
    assert intent.cached_input_tokens >= 180


def test_a_plan_the_bias_does_not_explain_stands(program: Any) -> None:
    engine = ScoringLM(SCRIPT, GIVEN, {"add_task": -3.0, "complete_task": -3.0})
    result = program(engine)(message=MESSAGE).result
    assert result.intents == ["add_task"] and len(engine.scored) == 2


def test_only_the_first_tool_is_rechosen(program: Any) -> None:
    script = {**SCRIPT, "intent": {"*": {"intents": ["add_task", "list_tasks"]}}}
    script["confirm"] = {"*": {"asked": {"complete_task": True, "list_tasks": True}}}
    result = program(ScoringLM(script, GIVEN, PRIOR))(message=MESSAGE).result
    assert result.intents[:2] == ["complete_task", "list_tasks"]


def test_a_conversation_answer_is_not_scored(program: Any) -> None:
    script = {**SCRIPT, "intent": {"*": {"intents": ["conversation"]}}}
    engine = ScoringLM(script, GIVEN, PRIOR)
    result = program(engine)(message="hello there").result
    assert result.calls == [] and result.reply == "Hello." and engine.scored == []


def test_off_by_default_and_a_model_that_cannot_score_keeps_the_plan(program: Any) -> None:
    engine = ScoringLM(SCRIPT, GIVEN, PRIOR)
    assert program(engine, calibrate=False)(message=MESSAGE).result.intents == ["add_task"]
    assert engine.scored == []
    plain = ScriptedLM(SCRIPT)  # no score_continuations: another backend
    assert program(plain)(message=MESSAGE).result.intents == ["add_task"]


def test_the_setting_is_recorded_and_rebuilt() -> None:
    assert make_strategy("freyr", calibrate=True).config() == {"calibrate": True}
    assert Freyr().config() == {}
    assert make_strategy("freyr", calibrate=True).planning.calibrate
