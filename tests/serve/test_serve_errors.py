"""Bad input and bad luck: OpenAI error objects with the right status, never a lost request."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from freyr_dspy.errors import BackendError
from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import FakeCall
from freyr_dspy.tools import Toolbox, toolbox_fingerprint
from tests.support.serve_helpers import (
    ASK_WEATHER,
    CHAT_REPLY,
    TOOLS,
    WEATHER,
    answer,
    make_program,
    serving,
    slow,
)

pytestmark = pytest.mark.server


def post(base_url: str, body: Any, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{base_url}/chat/completions", json=body, timeout=120, **kwargs)


def error_of(response: httpx.Response, status: int) -> dict[str, Any]:
    """The OpenAI error object of a response that must have ``status``."""
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"] and "\n" not in error["message"]  # one clear line
    return error


def health(base_url: str) -> dict[str, Any]:
    result: dict[str, Any] = httpx.get(base_url.removesuffix("/v1") + "/health").json()
    return result


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def in_background(call: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[Any]]:
    """Run ``call`` in a thread; its response (or exception) lands in the returned list."""
    out: list[Any] = []

    def target() -> None:
        try:
            out.append(call())
        except Exception as exc:
            out.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def test_a_body_that_is_not_json_is_a_400(base_url: str) -> None:
    response = httpx.post(
        f"{base_url}/chat/completions",
        content=b'{"model": "weather", "messages": [',
        headers={"content-type": "application/json"},
    )
    error = error_of(response, 400)
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("the body is not valid JSON")


def test_an_unknown_model_is_a_404_naming_the_served_ones(base_url: str) -> None:
    sdk = openai.OpenAI(base_url=base_url, api_key="-", max_retries=0)
    with pytest.raises(openai.NotFoundError) as caught:
        sdk.chat.completions.create(model="gpt-4o", messages=ASK_WEATHER)
    assert caught.value.code == "model_not_found"
    assert "weather" in str(caught.value)


def tool(name: str, parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        (tool("f", {"type": "array"}), "must have type 'object'"),
        (tool("g", {"properties": {"n": {"type": "integer", "minimum": "0"}}}), "minimum"),
        ({"type": "custom", "custom": {"name": "h"}}, "not a function tool"),
        (tool("", {}), "non-empty string 'name'"),
    ],
)
def test_a_malformed_tool_is_a_400_naming_it(
    base_url: str, broken: dict[str, Any], problem: str
) -> None:
    body = {"model": "weather", "messages": ASK_WEATHER, "tools": [broken]}
    error = error_of(post(base_url, body), 400)
    assert error["param"] == "tools" and problem in error["message"]


@pytest.mark.parametrize("name", ["get weather", "météo", "a" * 65, "ns.get_weather"])
def test_a_tool_name_openai_would_refuse_is_a_400_naming_the_tool(base_url: str, name: str) -> None:
    body = {"model": "weather", "messages": ASK_WEATHER, "tools": [WEATHER, tool(name, {})]}
    error = error_of(post(base_url, body), 400)
    assert (error["param"], error["code"]) == ("tools[1].function.name", "invalid_tool_name")
    assert repr(name) in error["message"]


def test_a_huge_body_is_refused_before_it_is_read_whole(base_url: str) -> None:
    huge = b'{"model": "weather", "messages": [' + b" " * (17 * 2**20) + b"]}"
    response = httpx.post(f"{base_url}/chat/completions", content=huge, timeout=60)
    assert error_of(response, 413)["code"] == "request_too_large"


CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
USER = {"role": "user", "content": "weather?"}

FORBIDDEN = {
    "a tool message answering no call": (
        [USER, {"role": "tool", "tool_call_id": "call_9", "content": "x"}],
        "messages[1].tool_call_id",
    ),
    "no user message": ([{"role": "system", "content": "Be brief."}], "messages"),
    "tool calls left unanswered": (
        [USER, {"role": "assistant", "tool_calls": [CALL]}, USER],
        "messages[2]",
    ),
    "an assistant message last": (
        [USER, {"role": "assistant", "content": "Sure."}],
        "messages[1].role",
    ),
    "an image": (
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
        "messages[0].content[0].type",
    ),
    "an unknown role": ([{"role": "function", "content": "x", "name": "f"}], "messages[0]"),
    "arguments that are not JSON": (
        [
            USER,
            {
                "role": "assistant",
                "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "{city"}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "x"},
        ],
        "messages[1].tool_calls[0].function.arguments",
    ),
    "no messages": ([], "messages"),
}


@pytest.mark.parametrize("case", list(FORBIDDEN))
def test_a_message_list_the_protocol_forbids_is_a_400(base_url: str, case: str) -> None:
    messages, param = FORBIDDEN[case]
    error = error_of(post(base_url, {"model": "weather", "messages": messages}), 400)
    assert (error["type"], error["param"]) == ("invalid_request_error", param)


OPTIONS = {
    "a named tool not offered": (
        {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
        "tool_choice",
    ),
    "required without tools": ({"tool_choice": "required"}, "tool_choice"),
    "several choices": ({"n": 2}, "n"),
    "the functions API": ({"functions": [{"name": "f"}]}, "functions"),
    "a temperature out of range": ({"temperature": 3}, "temperature"),
}


@pytest.mark.parametrize("case", list(OPTIONS))
def test_options_the_server_cannot_honour_are_a_400(base_url: str, case: str) -> None:
    extra, param = OPTIONS[case]
    body = {"model": "weather", "messages": ASK_WEATHER, **extra}
    assert error_of(post(base_url, body), 400)["param"] == param


def test_the_api_key_is_required_when_set() -> None:
    program, _ = make_program()
    with serving(ServedProgram("weather", program), api_key="s3cret") as base:
        body = {"model": "weather", "messages": ASK_WEATHER}
        assert error_of(post(base, body), 401)["code"] == "invalid_api_key"
        wrong = post(base, body, headers={"Authorization": "Bearer s3cre"})
        assert error_of(wrong, 401)["code"] == "invalid_api_key"
        assert httpx.get(f"{base}/models").status_code == 401
        assert health(base)["status"] == "ok"  # open, for load balancers
        sdk = openai.OpenAI(base_url=base, api_key="s3cret", max_retries=0)
        assert sdk.chat.completions.create(model="weather", messages=ASK_WEATHER).choices


def test_past_the_queue_bound_a_request_gets_503_with_retry_after() -> None:
    program, fake = make_program(slow(0.6))
    with serving(ServedProgram("weather", program), max_queue=0) as base:
        body = {"model": "weather", "messages": ASK_WEATHER}
        thread, first = in_background(lambda: post(base, body))
        wait_for(lambda: health(base)["running"] == 1)
        refused = post(base, body)
        thread.join()
    error = error_of(refused, 503)
    assert (error["type"], error["code"]) == ("server_error", "queue_full")
    assert int(refused.headers["Retry-After"]) >= 1
    assert first[0].status_code == 200
    assert fake.roles_called() == ["chat"]  # the refused request never reached the model


def test_a_client_that_leaves_the_queue_frees_its_place() -> None:
    program, fake = make_program(slow(3.0))  # long enough for the steps below, on a busy machine
    with serving(ServedProgram("weather", program), max_queue=1) as base:
        body = {"model": "weather", "messages": ASK_WEATHER}
        running, first = in_background(lambda: post(base, body))
        wait_for(lambda: health(base)["running"] == 1)
        with pytest.raises(httpx.ReadTimeout):  # waits, then hangs up
            httpx.post(f"{base}/chat/completions", json=body, timeout=0.3)
        wait_for(lambda: health(base)["waiting"] == 0)
        waiting, third = in_background(lambda: post(base, body))  # admitted: the place is free
        wait_for(lambda: health(base)["waiting"] == 1)
        assert error_of(post(base, body), 503)["code"] == "queue_full"  # now it is taken
        running.join()
        waiting.join()
    assert first[0].status_code == 200 and third[0].status_code == 200
    assert fake.roles_called() == ["chat", "chat"]  # the request that left never ran


def test_a_program_over_the_time_limit_gets_504_and_keeps_the_model_until_done() -> None:
    program, fake = make_program(slow(0.6))
    with serving(ServedProgram("weather", program), timeout=0.2) as base:
        body = {"model": "weather", "messages": ASK_WEATHER}
        assert error_of(post(base, body), 504)["code"] == "timeout"
        assert health(base)["running"] == 1  # its thread still holds the model
        wait_for(lambda: health(base)["running"] == 0)
    assert fake.roles_called() == ["chat"]


def failing(message: str) -> Callable[[FakeCall], Any]:
    def fail(call: FakeCall) -> Any:
        raise BackendError(message, role=call.role, model="fake/serve")

    return fail


def test_a_model_failure_is_a_502_with_its_kind() -> None:
    program, _ = make_program(failing("connection refused"))
    with serving(ServedProgram("weather", program)) as base:
        error = error_of(post(base, {"model": "weather", "messages": ASK_WEATHER}), 502)
    assert (error["type"], error["code"]) == ("server_error", "freyr_model")
    assert "connection refused" in error["message"]


def test_a_model_that_times_out_is_a_504_with_its_kind() -> None:
    def time_out(call: FakeCall) -> Any:
        raise BackendError("no answer", role=call.role, model="fake/serve") from TimeoutError()

    program, _ = make_program(time_out)
    with serving(ServedProgram("weather", program)) as base:
        error = error_of(post(base, {"model": "weather", "messages": ASK_WEATHER}), 504)
    assert (error["type"], error["code"]) == ("server_error", "freyr_timeout")


def test_calls_that_fail_every_attempt_are_answered_in_words_not_a_502() -> None:
    def unfitting(call: FakeCall) -> Any:
        if call.role == "parameters":  # the tool does not do what was asked: no location fits
            return {"arguments": {"unit": "kelvin"}}
        return answer(call)

    program, fake = make_program(unfitting)
    with serving(ServedProgram("weather", program)) as base:
        response = post(base, {"model": "weather", "messages": ASK_WEATHER, "tools": TOOLS})
    assert response.status_code == 200
    [choice] = response.json()["choices"]
    assert (choice["finish_reason"], choice["message"]["content"]) == ("stop", CHAT_REPLY)
    assert fake.roles_called()[-1] == "chat"


def test_a_prompt_over_the_context_is_refused_not_truncated() -> None:
    program, fake = make_program()
    served = ServedProgram("weather", program, context_tokens=1500)
    with serving(served) as base:
        long = [{"role": "user", "content": "weather " * 400}]  # ~800 tokens, plus the program's
        error = error_of(post(base, {"model": "weather", "messages": long, "tools": TOOLS}), 400)
        assert post(base, {"model": "weather", "messages": ASK_WEATHER}).status_code == 200
    assert (error["code"], error["param"]) == ("context_length_exceeded", "messages")
    assert fake.roles_called() == ["chat"]  # the long request never reached the model


def test_a_context_overflow_in_the_model_is_context_length_exceeded() -> None:
    program, _ = make_program(failing("requested tokens exceed context window of 8192"))
    with serving(ServedProgram("weather", program)) as base:
        error = error_of(post(base, {"model": "weather", "messages": ASK_WEATHER}), 400)
    assert error["code"] == "context_length_exceeded"


def test_required_that_no_tool_can_satisfy_is_a_422_the_sdk_does_not_retry() -> None:
    def chatty(call: FakeCall) -> Any:
        return {"intents": ["conversation"]} if call.role == "intent" else {"reply": "hi"}

    program, _ = make_program(chatty)
    with serving(ServedProgram("weather", program)) as base:
        body = {"model": "weather", "messages": ASK_WEATHER, "tools": TOOLS}
        error = error_of(post(base, {**body, "tool_choice": "required"}), 422)
    assert error["code"] == "tool_choice_unsatisfied" and "no offered tool fits" in error["message"]


def test_a_compiled_programs_tools_are_checked_unless_allowed() -> None:
    program, _ = make_program()
    compiled_for = toolbox_fingerprint(Toolbox.from_openai([WEATHER]))
    strict = ServedProgram("strict", program, compiled_for=compiled_for)
    lenient = ServedProgram("lenient", program, compiled_for=compiled_for, allow_changed_tools=True)
    with serving(strict, lenient) as base:
        changed = post(base, {"model": "strict", "messages": ASK_WEATHER, "tools": TOOLS})
        same = post(base, {"model": "strict", "messages": ASK_WEATHER, "tools": [WEATHER]})
        allowed = post(base, {"model": "lenient", "messages": ASK_WEATHER, "tools": TOOLS})
    error = error_of(changed, 400)
    assert error["code"] == "tools_changed" and "new: get_time" in error["message"]
    assert same.status_code == 200 and allowed.status_code == 200


def test_a_bug_in_the_program_is_a_500_in_one_line_and_the_server_goes_on() -> None:
    program, _ = make_program(lambda call: None)  # every call unscripted: FakeLMError
    with serving(ServedProgram("weather", program)) as base:
        error = error_of(post(base, {"model": "weather", "messages": ASK_WEATHER}), 500)
        assert health(base)["running"] == 0
    assert (error["type"], error["code"]) == ("server_error", "internal")
    assert error["message"].startswith("FakeLMError: unscripted call to role 'chat'")
