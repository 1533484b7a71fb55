"""``FreyrProgram.answer(Request)``: a request is a value; its overrides never touch the program.

The request's sampling reaches every role call and its reply cap and JSON contract only the
roles that write the reply, as per-call settings: no predictor's LM or signature changes, so
requests with different settings can run on one program at once.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.schemas import CallRecord, Outcome
from freyr_dspy.strategies import CallOverrides, Request
from freyr_dspy.testing import Answer, FakeCall
from freyr_dspy.tools import Toolbox
from tests.support.serve_helpers import ARGUMENTS, CHAT_REPLY, TOOLS, answer, make_program

WEATHER_ASK = "What is the weather like in Paris today?"


def answered(call: CallRecord) -> CallRecord:
    """``call`` as the caller answers it: made elsewhere, its result sent back."""
    return call.model_copy(update={"outcome": Outcome(ok=True, message="21 C, sunny")})


def toolbox() -> Toolbox:
    return Toolbox.from_openai(TOOLS)


TOOLBOX = toolbox()


def test_the_overrides_reach_each_call_and_leave_the_predictors_as_they_were() -> None:
    program, engine = make_program()
    predictors = program.predictors()
    before = [(p.lm, p.signature) for p in predictors]
    overrides = CallOverrides(sampling={"temperature": 0.7, "seed": 11}, reply_tokens=40)
    result = program.answer(Request(WEATHER_ASK, toolbox=toolbox(), overrides=overrides))
    after_calls = program.answer(
        Request(
            WEATHER_ASK,
            toolbox=toolbox(),
            answered=tuple(answered(call) for call in result.calls),
            overrides=overrides,
        )
    )
    assert [c.tool for c in result.calls] == ["get_weather"]
    assert after_calls.reply.startswith("Summary:") and "21 C, sunny" in after_calls.reply
    by_role = {call.role: call.config for call in engine.calls}
    assert set(by_role) == {"intent", "parameters", "summary"}
    assert all(c.temperature == 0.7 and c.seed == 11 for c in by_role.values())
    assert by_role["summary"].max_tokens == 40  # the reply's cap
    assert by_role["parameters"].max_tokens != 40  # a JSON-writing role keeps its own
    assert [(p.lm, p.signature) for p in predictors] == before


def test_a_reply_schema_holds_only_the_roles_that_write_the_reply() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    program, engine = make_program(
        lambda call: {"reply": '{"city": "Paris"}'} if call.role == "chat" else None,
        structured_output=True,
    )
    signature = program.role("chat").predict.signature
    result = program.answer(Request("Which city?", overrides=CallOverrides(reply_schema=schema)))
    assert result.reply == '{"city": "Paris"}'
    [call] = engine.calls
    assert "city" in str(call.config.response_format)
    assert program.role("chat").predict.signature is signature


def test_requests_with_different_settings_share_one_program_at_once() -> None:
    gate = threading.Barrier(2, timeout=10)

    def both_at_once(call: FakeCall) -> Answer | None:
        if call.role == "chat":
            gate.wait()  # each request's chat call waits for the other's: they overlap
        return answer(call)

    program, engine = make_program(both_at_once)

    def ask(seed: int) -> str:
        overrides = CallOverrides(sampling={"seed": seed})
        return program.answer(Request("Hello", overrides=overrides)).reply

    with ThreadPoolExecutor(2) as pool:
        replies = list(pool.map(ask, [1, 2]))
    assert replies == [CHAT_REPLY, CHAT_REPLY]
    assert sorted(call.config.seed for call in engine.calls) == [1, 2]


def test_tool_choice_none_replies_and_named_calls_only_that_tool() -> None:
    program, engine = make_program()
    words = program.answer(Request(WEATHER_ASK, toolbox=toolbox(), tool_choice="none"))
    named = program.answer(
        Request(WEATHER_ASK, toolbox=toolbox(), tool_choice="named", function="get_time")
    )
    assert words.reply == CHAT_REPLY and words.calls == []
    assert [(c.tool, c.arguments) for c in named.calls] == [("get_time", ARGUMENTS["get_time"])]
    assert "intent" not in [call.role for call in engine.calls[-1:]]  # named: no planning


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"tool_choice": "required"}, "needs tools"),
        ({"tool_choice": "named", "function": "get_time"}, "needs tools"),
        ({"tool_choice": "named", "function": "book_table", "toolbox": TOOLBOX}, "not an offered"),
    ],
)
def test_a_request_that_cannot_be_answered_as_asked_is_refused(
    kwargs: dict[str, Any], error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        Request(WEATHER_ASK, **kwargs)
