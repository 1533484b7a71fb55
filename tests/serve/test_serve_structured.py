"""``response_format``: a reply held to JSON by the backend, checked before it is sent, or a 400
naming what cannot honour it; never asked for and then ignored."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openai import OpenAI

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import Answer, FakeCall
from freyr_dspy.tools import Toolbox
from tests.support.serve_helpers import (
    ASK_WEATHER,
    CHAT_REPLY,
    TOOLS,
    answer,
    make_program,
    serving,
)

pytestmark = pytest.mark.server

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
AS_CITY = {"type": "json_schema", "json_schema": {"name": "City", "schema": CITY, "strict": True}}
HELLO = [{"role": "user", "content": "Hello! Which city are you in?"}]


def replying(reply: Any) -> Callable[[FakeCall], Answer | None]:
    """The serve fake, its reply roles answering ``reply`` (an object under a format)."""

    def replies(call: FakeCall) -> Answer | None:
        return {"reply": reply} if call.role in ("chat", "summary") else answer(call)

    return replies


def post(base: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{base}/chat/completions", json={"model": "weather", **body}, timeout=60)


def sent_reply_schema(call: FakeCall) -> Any:
    """The schema of ``reply`` the backend was told to keep to (None: nothing was sent)."""
    fmt = call.config.response_format or {}
    schema = fmt.get("json_schema", fmt).get("schema", {})
    return schema.get("properties", {}).get("reply")


def test_a_json_schema_reply_is_held_to_the_schema_and_sent_as_its_json() -> None:
    program, fake = make_program(replying({"city": "Paris", "celsius": 14}), structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        sdk = OpenAI(base_url=base, api_key="-", max_retries=0)
        done = sdk.chat.completions.create(model="weather", messages=HELLO, response_format=AS_CITY)
        plain = sdk.chat.completions.create(model="weather", messages=HELLO)
    assert json.loads(done.choices[0].message.content or "") == {"city": "Paris", "celsius": 14}
    assert sent_reply_schema(fake.calls[0]) == CITY  # the backend's constraint, not a wish
    assert sent_reply_schema(fake.calls[1])["type"] == "string"  # the next request: text again
    assert plain.choices[0].message.content is not None


def test_json_object_asks_for_any_object() -> None:
    program, fake = make_program(replying({"greeting": "hi"}), structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        response = post(base, messages=HELLO, response_format={"type": "json_object"})
    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"greeting": "hi"}
    assert sent_reply_schema(fake.calls[0]) == {"type": "object"}


def test_tool_calls_are_unaffected_and_the_summary_is_held_to_the_format() -> None:
    program, fake = make_program(replying({"city": "Paris", "celsius": 14}), structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        first = post(base, messages=ASK_WEATHER, tools=TOOLS, response_format=AS_CITY).json()
        message = first["choices"][0]["message"]
        [call] = message["tool_calls"]
        result = {"role": "tool", "tool_call_id": call["id"], "content": "Paris: 14 C"}
        messages = [*ASK_WEATHER, message, result]
        second = post(base, messages=messages, tools=TOOLS, response_format=AS_CITY).json()
    assert json.loads(second["choices"][0]["message"]["content"]) == {
        "city": "Paris",
        "celsius": 14,
    }
    assert fake.roles_called()[-1] == "summary"
    assert sent_reply_schema(fake.calls[-1]) == CITY


def test_a_streamed_structured_reply_comes_whole_and_checked() -> None:
    program, _ = make_program(replying({"city": "Paris", "celsius": 14}), structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        stream = OpenAI(base_url=base, api_key="-", max_retries=0).chat.completions.create(
            model="weather", messages=HELLO, response_format=AS_CITY, stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert json.loads(text) == {"city": "Paris", "celsius": 14}


def test_a_reply_that_misses_the_schema_is_a_502_never_sent() -> None:
    program, _ = make_program(replying({"city": "Paris"}), structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        response = post(base, messages=HELLO, response_format=AS_CITY)
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "structured_output_invalid" and "'celsius'" in error["message"]


def test_a_model_that_can_only_be_asked_in_the_prompt_is_a_400_naming_it() -> None:
    program, fake = make_program()  # a fake that does not claim to keep to schemas
    with serving(ServedProgram("weather", program)) as base:
        refused = post(base, messages=HELLO, response_format=AS_CITY)
        text = post(base, messages=HELLO, response_format={"type": "text"})
    error = refused.json()["error"]
    assert refused.status_code == 400 and error["param"] == "response_format"
    assert "role's model fake/serve cannot be held to a JSON schema" in error["message"]
    assert text.json()["choices"][0]["message"]["content"] == CHAT_REPLY
    assert fake.roles_called() == ["chat"]  # the refused request never ran


@pytest.mark.parametrize(
    ("response_format", "param", "words"),
    [
        ({"type": "yaml"}, "response_format.type", "'yaml' is not supported"),
        ({"type": "json_schema"}, "response_format.json_schema.schema", "expected the JSON"),
        (
            {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "thing"}}},
            "response_format.json_schema.schema",
            "not a valid JSON schema",
        ),
    ],
)
def test_a_malformed_response_format_is_a_400(
    response_format: dict[str, Any], param: str, words: str
) -> None:
    program, _ = make_program(structured_output=True)
    with serving(ServedProgram("weather", program)) as base:
        response = post(base, messages=HELLO, response_format=response_format)
    error = response.json()["error"]
    assert response.status_code == 400 and error["param"] == param and words in error["message"]


def test_a_schema_llama_cpp_has_no_grammar_for_is_a_400_for_an_embedded_model() -> None:
    program = FreyrProgram(toolbox=Toolbox([]))  # built, not loaded: no request reaches it
    small = RoleModel(model="embedded/qwen2.5-coder-0.5b")
    program.apply_assignment(dict.fromkeys(program.role_names, small))
    refusable = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"not": {}}}}
    with serving(ServedProgram("qwen", program)) as base:
        response = httpx.post(
            f"{base}/chat/completions",
            json={"model": "qwen", "messages": HELLO, "response_format": refusable},
        )
    assert response.status_code == 400
    assert "llama.cpp cannot turn this schema into a grammar" in response.json()["error"]["message"]
