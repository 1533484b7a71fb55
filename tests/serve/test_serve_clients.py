"""Real clients against a real server: the ``openai`` SDK and litellm, on a fake model."""

from __future__ import annotations

import json
from typing import Any

import httpx
import litellm
import pytest
from openai import OpenAI

from freyr_dspy.schemas import RoleUsage
from freyr_dspy.serve import ServedProgram
from freyr_dspy.serve._translate import usage_of
from freyr_dspy.testing import FunctionLM
from tests.support.serve_helpers import (
    ARGUMENTS,
    ASK_WEATHER,
    CHAT_REPLY,
    TOOLS,
    WEATHER,
    make_program,
    serving,
)

pytestmark = pytest.mark.server

ASK = ASK_WEATHER


def client(base_url: str) -> OpenAI:
    return OpenAI(base_url=base_url, api_key="-", max_retries=0)


def test_a_tool_round_trip_with_the_openai_sdk(base_url: str, fake: FunctionLM) -> None:
    sdk = client(base_url)
    first = sdk.chat.completions.create(model="weather", messages=ASK, tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.id.startswith("call_") and call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"location": "Paris"}
    assert fake.roles_called() == ["intent", "parameters"]  # calls only: no summary yet

    result = {"role": "tool", "tool_call_id": call.id, "content": "14 C and cloudy"}
    second = sdk.chat.completions.create(
        model="weather", messages=[*ASK, choice.message, result], tools=TOOLS
    )
    reply = second.choices[0]
    assert reply.finish_reason == "stop" and not reply.message.tool_calls
    assert reply.message.content == "Summary: - get_weather(location='Paris'): 14 C and cloudy"
    assert fake.roles_called()[2:] == ["summary"]  # no call waited: the summary reports


def test_usage_counts_every_role_and_names_each(base_url: str, fake: FunctionLM) -> None:
    completion = client(base_url).chat.completions.create(
        model="weather", messages=ASK, tools=TOOLS
    )
    usage = completion.usage
    assert usage is not None
    roles = (usage.model_extra or {})["freyr_roles"]
    assert set(roles) == {"intent", "parameters"}
    assert usage.prompt_tokens == sum(r["input_tokens"] for r in roles.values()) > 0
    assert usage.completion_tokens == sum(r["output_tokens"] for r in roles.values()) > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0  # a fake has no prefix cache


def test_cached_tokens_are_the_prefix_caches_of_every_role() -> None:
    usage = usage_of(
        {
            "intent": RoleUsage(lm_calls=1, input_tokens=300, cached_input_tokens=250),
            "parameters": RoleUsage(lm_calls=1, input_tokens=200, cached_input_tokens=120),
        }
    )
    assert usage.prompt_tokens_details.cached_tokens == 370 and usage.prompt_tokens == 500


def test_a_tool_round_trip_through_litellm(base_url: str, fake: FunctionLM) -> None:
    options: dict[str, Any] = {"model": "openai/weather", "api_base": base_url, "api_key": "-"}
    first = litellm.completion(messages=ASK, tools=TOOLS, **options)
    message = first.choices[0].message
    [call] = message.tool_calls
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"location": "Paris"}
    result = {"role": "tool", "tool_call_id": call.id, "content": "9 C, rain"}
    second = litellm.completion(messages=[*ASK, message.model_dump(), result], **options)
    assert second.choices[0].message.content.endswith("9 C, rain")


def test_no_tools_or_tool_choice_none_get_the_chat_roles_reply(
    base_url: str, fake: FunctionLM
) -> None:
    sdk = client(base_url)
    plain = sdk.chat.completions.create(model="weather", messages=ASK)
    declined = sdk.chat.completions.create(
        model="weather", messages=ASK, tools=TOOLS, tool_choice="none"
    )
    for completion in (plain, declined):
        assert completion.choices[0].message.content == CHAT_REPLY
        assert completion.choices[0].finish_reason == "stop"
    assert fake.roles_called() == ["chat", "chat"]  # no intent: tools were off the table


def test_required_calls_a_tool_even_when_the_program_would_chat(
    base_url: str, fake: FunctionLM
) -> None:
    hello = [{"role": "user", "content": "Hello there"}]
    sdk = client(base_url)
    chatted = sdk.chat.completions.create(model="weather", messages=hello, tools=TOOLS)
    assert chatted.choices[0].message.content == CHAT_REPLY
    fake.calls.clear()
    forced = sdk.chat.completions.create(
        model="weather", messages=hello, tools=TOOLS, tool_choice="required"
    )
    [call] = forced.choices[0].message.tool_calls or []
    assert forced.choices[0].finish_reason == "tool_calls"
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_time",
        ARGUMENTS["get_time"],
    )
    # the program chatted; asked again without the "conversation" answer, it named a tool
    assert fake.roles_called() == ["intent", "chat", "intent", "parameters"]
    usage = (forced.usage.model_extra or {})["freyr_roles"] if forced.usage else {}
    assert usage["intent"]["lm_calls"] == 2  # both runs are paid for


def test_a_named_tool_is_called_without_asking_the_intent_role(
    base_url: str, fake: FunctionLM
) -> None:
    completion = client(base_url).chat.completions.create(
        model="weather",
        messages=ASK,
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "get_time"
    assert fake.roles_called() == ["parameters"]


def test_parallel_tool_calls_false_keeps_the_first_call(base_url: str, fake: FunctionLM) -> None:
    both = [{"role": "user", "content": "Tell me the weather and the time in Paris"}]
    sdk = client(base_url)
    parallel = sdk.chat.completions.create(model="weather", messages=both, tools=TOOLS)
    single = sdk.chat.completions.create(
        model="weather", messages=both, tools=TOOLS, parallel_tool_calls=False
    )
    names = [c.function.name for c in parallel.choices[0].message.tool_calls or []]
    assert names == ["get_weather", "get_time"]
    assert [c.function.name for c in single.choices[0].message.tool_calls or []] == ["get_weather"]
    ids = [c.id for c in parallel.choices[0].message.tool_calls or []]
    assert len(set(ids)) == 2


def test_streamed_tool_calls_reassemble_into_the_same_calls(
    base_url: str, fake: FunctionLM
) -> None:
    both = [{"role": "user", "content": "Tell me the weather and the time in Paris"}]
    stream = client(base_url).chat.completions.create(
        model="weather",
        messages=both,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    calls: dict[int, dict[str, str]] = {}
    finish, usage, roles = None, None, []
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            roles += [choice.delta.role] if choice.delta.role else []
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += delta.id or ""
                entry["name"] += (delta.function and delta.function.name) or ""
                entry["arguments"] += (delta.function and delta.function.arguments) or ""
    assert finish == "tool_calls" and roles == ["assistant"]
    assert [c["name"] for c in calls.values()] == ["get_weather", "get_time"]
    assert [json.loads(c["arguments"]) for c in calls.values()] == list(ARGUMENTS.values())
    assert all(c["id"].startswith("call_") for c in calls.values())
    assert usage is not None and usage.total_tokens > 0


def test_streamed_content_reassembles_into_the_reply(base_url: str, fake: FunctionLM) -> None:
    stream = client(base_url).chat.completions.create(model="weather", messages=ASK, stream=True)
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(pieces) == CHAT_REPLY
    assert sum(1 for p in pieces if p) > 1  # sent in pieces, not as one chunk


def test_the_raw_stream_is_openai_sse_ending_with_done(base_url: str, fake: FunctionLM) -> None:
    body = {"model": "weather", "messages": ASK, "tools": TOOLS, "stream": True}
    response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=30)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line for line in response.text.split("\n\n") if line]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_sampling_of_the_request_reaches_the_roles_and_is_undone(
    base_url: str, fake: FunctionLM
) -> None:
    sdk = client(base_url)
    sdk.chat.completions.create(
        model="weather", messages=ASK, temperature=0.7, top_p=0.9, seed=11, max_tokens=40
    )
    [chat] = fake.calls
    assert (chat.config.temperature, chat.config.top_p, chat.config.seed) == (0.7, 0.9, 11)
    assert chat.config.max_tokens == 40  # the reply's cap
    sdk.chat.completions.create(model="weather", messages=ASK, tools=TOOLS, temperature=0.5)
    intent = fake.calls[1]
    assert intent.role == "intent" and intent.config.temperature == 0.5
    assert intent.config.max_tokens != 40  # a JSON-writing role keeps its own cap
    fake.calls.clear()
    sdk.chat.completions.create(model="weather", messages=ASK)
    assert fake.calls[0].config.temperature == 0.0  # the program's own sampling is back


def test_models_and_health(base_url: str) -> None:
    models = client(base_url).models.list()
    assert [m.id for m in models.data] == ["weather"]
    health = httpx.get(base_url.removesuffix("/v1") + "/health").json()
    assert health["status"] == "ok" and health["models"] == ["weather"]
    assert (health["running"], health["waiting"]) == (0, 0)


def test_several_programs_are_picked_by_the_model_field() -> None:
    first, first_fake = make_program()
    second, second_fake = make_program(strategy="nlt")
    programs = (ServedProgram("a", first), ServedProgram("b", second, aliases=("b.json",)))
    with serving(*programs) as base:
        sdk = client(base)
        assert [m.id for m in sdk.models.list().data] == ["a", "b"]
        sdk.chat.completions.create(model="a", messages=ASK)
        sdk.chat.completions.create(model="b.json", messages=ASK)
    assert first_fake.roles_called() == ["chat"]
    assert second_fake.roles_called() == ["chat"]


def test_any_model_answers_a_client_whose_model_name_is_fixed() -> None:
    program, fake = make_program()
    with serving(ServedProgram("weather", program), fallback=True) as base:
        completion = client(base).chat.completions.create(
            model="gpt-4o", messages=ASK, tools=[WEATHER]
        )
    assert completion.model == "gpt-4o"
    assert completion.choices[0].finish_reason == "tool_calls"
    assert fake.roles_called() == ["intent", "parameters"]
