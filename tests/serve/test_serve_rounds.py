"""Several rounds of tool calls through ``freyr serve``: a call waits for the result it needs,
results are planned from again, and ``required`` never repeats a call already answered."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import Answer, FakeCall, FunctionLM
from tests.support.serve_helpers import WEATHER, make_program, serving

pytestmark = pytest.mark.server

LOCATE = {
    "type": "function",
    "function": {
        "name": "locate",
        "description": "The city the user is in.",
        "parameters": {"type": "object", "properties": {}},
    },
}
FINAL = {
    "type": "function",
    "function": {
        "name": "final_result",
        "description": "The final answer, as structured data.",
        "parameters": {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
        },
    },
}
ASK = [{"role": "user", "content": "Find out where I am, then get the weather there."}]


def answer(call: FakeCall) -> Answer:
    """Plans the lookup and the weather; writes a city only once a result names one."""
    seen = call.inputs.get("conversation", "") + call.inputs.get("message", "")
    if call.role == "intent":
        if "final_result" in call.inputs.get("tools", "") and "conversation" not in call.inputs.get(
            "tools", ""
        ):
            return {"intents": ["final_result"]}
        if "locate" in call.inputs.get("tools", ""):
            return {"intents": ["locate", "get_weather"]}
        return {"intents": ["get_weather"]}
    if call.role == "parameters":
        if "final_result" in call.inputs.get("tool", ""):
            return {"arguments": {"summary": "2 C in Oslo"}}
        if "get_weather" in call.inputs.get("tool", ""):
            return {"arguments": {"location": "Oslo" if "Oslo" in seen else "London"}}
        return {"arguments": {}}
    if call.role == "summary":
        return {"reply": f"Summary: {call.inputs.get('outcomes', '')}"}
    return {"reply": "Hello."}


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[OpenAI, FunctionLM]]:
    program, engine = make_program(answer)
    with serving(ServedProgram("rounds", program)) as base:
        yield OpenAI(base_url=base, api_key="-", max_retries=0), engine


def calls_of(completion: Any) -> list[tuple[str, dict[str, Any]]]:
    message = completion.choices[0].message
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


def results(completion: Any, *contents: str) -> list[dict[str, Any]]:
    message = completion.choices[0].message
    return [
        message.model_dump(exclude_none=True),
        *(
            {"role": "tool", "tool_call_id": call.id, "content": content}
            for call, content in zip(message.tool_calls, contents, strict=True)
        ),
    ]


def test_a_call_whose_value_comes_from_a_result_waits_for_it(
    served: tuple[OpenAI, FunctionLM],
) -> None:
    sdk, _ = served
    tools = [LOCATE, WEATHER]
    first = sdk.chat.completions.create(model="rounds", messages=ASK, tools=tools)
    # get_weather(location="London") would be a city nobody gave: it waits for locate's result
    assert calls_of(first) == [("locate", {})]
    history = [*ASK, *results(first, "You are in Oslo.")]
    second = sdk.chat.completions.create(model="rounds", messages=history, tools=tools)
    assert calls_of(second) == [("get_weather", {"location": "Oslo"})]
    history += results(second, "2 C and snowing")
    third = sdk.chat.completions.create(model="rounds", messages=history, tools=tools)
    assert third.choices[0].finish_reason == "stop"
    assert "2 C and snowing" in (third.choices[0].message.content or "")


def test_required_after_results_calls_what_is_missing_never_the_answered_call(
    served: tuple[OpenAI, FunctionLM],
) -> None:
    sdk, _ = served
    ask = [{"role": "user", "content": "What is the weather in Oslo? Answer as structured data."}]
    tools = [WEATHER, FINAL]
    first = sdk.chat.completions.create(
        model="rounds", messages=ask, tools=tools, tool_choice="required"
    )
    assert calls_of(first) == [("get_weather", {"location": "Oslo"})]
    history = [*ask, *results(first, "2 C")]
    second = sdk.chat.completions.create(
        model="rounds", messages=history, tools=tools, tool_choice="required"
    )
    assert calls_of(second) == [("final_result", {"summary": "2 C in Oslo"})]
