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


def tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    """An OpenAI tool whose parameters are required strings or numbers, as ``properties`` types."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(properties),
            },
        },
    }


CONVERT = tool("convert_currency", "Convert money.", amount="number", source="string",
               target="string")  # fmt: skip
TODO = tool("add_todo", "Add a todo item.", title="string")
CONVERT_THEN_TODO = (
    "Convert 100 USD to EUR, then add a todo titled 'pay' followed by the converted amount"
)


def converts_then_adds(call: FakeCall) -> Answer:
    """Plans both calls; the todo's title carries an amount only once a result gives one.

    With the result in view it plans the conversion alone, as Qwen 0.5B did: the todo that
    waited is made because its id said it waited, not because the new plan names it.
    """
    seen = call.inputs.get("conversation", "")
    if call.role == "intent":
        if "92.50" in seen:
            return {"intents": ["convert_currency"]}
        return {"intents": ["convert_currency", "add_todo"]}
    if call.role == "parameters" and "convert_currency" in call.inputs.get("tool", ""):
        return {"arguments": {"amount": 100, "source": "USD", "target": "EUR"}}
    if call.role == "parameters":
        return {"arguments": {"title": "pay 92.50 EUR" if "92.50" in seen else "pay"}}
    return {"reply": f"Summary: {call.inputs.get('outcomes', '')}"}


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_that_points_at_an_earlier_result_waits_though_its_values_are_stated(
    stream: bool,
) -> None:
    program, _ = make_program(converts_then_adds)
    with serving(ServedProgram("convert", program)) as base:
        sdk = OpenAI(base_url=base, api_key="-", max_retries=0)
        ask = [{"role": "user", "content": CONVERT_THEN_TODO}]
        first = create(sdk, ask, [CONVERT, TODO], stream)
        # add_todo(title="pay") has every value stated, but the request says the title takes
        # the converted amount: it waits for convert_currency's result
        assert calls_of(first) == [
            ("convert_currency", {"amount": 100, "source": "USD", "target": "EUR"})
        ]
        history = [*ask, *results(first, "100 USD = 92.50 EUR")]
        second = create(sdk, history, [CONVERT, TODO], stream)
        assert calls_of(second) == [("add_todo", {"title": "pay 92.50 EUR"})]


def create(sdk: OpenAI, messages: list[dict[str, Any]], tools: list[Any], stream: bool) -> Any:
    """A completion, streamed and gathered into one when ``stream``."""
    if not stream:
        return sdk.chat.completions.create(model="convert", messages=messages, tools=tools)
    with sdk.chat.completions.stream(model="convert", messages=messages, tools=tools) as events:
        return events.get_final_completion()
