"""``scripts/conformance_serve.py``: its checks on hand-written answers, its table and report,
and one run against ``freyr serve`` on a fake."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import httpx2  # the openai SDK's HTTP client: its errors carry this library's responses
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def conformance() -> ModuleType:
    return load_script("conformance_serve")


def completion(
    content: str | None = None,
    *calls: tuple[str, str],
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> ChatCompletion:
    """A chat completion as the SDK parses one: ``content`` and ``calls`` (name, arguments)."""
    tool_calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": content, "tool_calls": tool_calls or None}
    finish = finish_reason or ("tool_calls" if calls else "stop")
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
    )


def answer(conformance: ModuleType, *args: Any, **kwargs: Any) -> Any:
    return conformance.answer_of(completion(*args, **kwargs))


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
    )


def http_error(status: int, code: str | None, headers: dict[str, str] | None = None) -> Any:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, headers=headers, request=request)
    body = {"message": "nothing fits", "type": "invalid_request_error", "code": code}
    return openai.APIStatusError(f"Error code: {status}", response=response, body=body)


def test_tool_calls_are_valid_only_when_offered_json_objects_that_follow_the_schema(
    conformance: ModuleType,
) -> None:
    tools = [conformance.WEATHER, conformance.CURRENCY]
    check = conformance.check_valid_calls
    paris = ("get_weather", '{"city": "Paris"}')
    assert check(answer(conformance, None, paris), tools=tools, finish_reason="tool_calls") == (
        True,
        "",
    )
    assert check(answer(conformance, None, ("book_table", "{}")), tools=tools) == (
        False,
        "book_table is not offered",
    )
    passed, reason = check(answer(conformance, None, ("get_weather", '{"city": 3}')), tools=tools)
    assert not passed and "invalid" in reason
    passed, reason = check(answer(conformance, None, ("get_weather", "{city")), tools=tools)
    assert not passed and "not a JSON object" in reason
    passed, reason = check(answer(conformance, "It is sunny."), tools=tools)
    assert not passed and reason.startswith("no tool_calls (finish stop)")
    named = check(answer(conformance, None, paris), tools=tools, only="convert_currency")
    assert named == (False, "called get_weather, not convert_currency")
    late = check(answer(conformance, None, paris, finish_reason="stop"), tools=tools)
    assert late == (True, "")  # no finish reason asked for
    passed, reason = check(
        answer(conformance, None, paris, finish_reason="stop"),
        tools=tools,
        finish_reason="tool_calls",
    )
    assert not passed and reason == "finish_reason stop, not tool_calls"


def test_a_text_reply_has_words_and_no_call(conformance: ModuleType) -> None:
    check = conformance.check_text_reply
    assert check(answer(conformance, "Sunny in Paris.")) == (True, "")
    assert check(answer(conformance, "  ")) == (False, "empty content")
    passed, reason = check(answer(conformance, None, ("get_weather", '{"city": "Paris"}')))
    assert not passed and reason.startswith("tool_calls: get_weather")
    odd = check(answer(conformance, "Sunny.", finish_reason="tool_calls"))
    assert odd == (False, "finish_reason tool_calls without calls")


def test_required_with_nothing_fitting_takes_a_call_or_a_4xx_the_sdk_does_not_retry(
    conformance: ModuleType,
) -> None:
    check = conformance.check_call_or_refusal
    tools = [conformance.WEATHER]
    refused = check(http_error(422, "tool_choice_unsatisfied"), tools=tools)
    assert refused == (True, "refused: HTTP 422 tool_choice_unsatisfied")
    passed, reason = check(http_error(500, None), tools=tools)
    assert not passed and reason.endswith("(the SDK retries it)")
    passed, reason = check(http_error(429, "busy"), tools=tools)
    assert not passed and "429" in reason
    told = check(http_error(400, "x", {"x-should-retry": "true"}), tools=tools)
    assert not told[0]  # the server asked for retries: the SDK would send it again
    called = check(answer(conformance, None, ("get_weather", '{"city": "Oslo"}')), tools=tools)
    assert called == (True, "called get_weather")
    passed, _ = check(answer(conformance, "Here is a joke."), tools=tools)
    assert not passed  # words are neither a call nor a refusal


def test_a_tool_not_offered_must_be_a_client_error(conformance: ModuleType) -> None:
    check = conformance.check_client_error
    passed, reason = check(http_error(400, "invalid_request_error"))
    assert passed and reason == "HTTP 400 invalid_request_error: nothing fits"
    assert not check(http_error(500, None))[0]
    passed, reason = check(answer(conformance, "Booked!"))
    assert not passed and reason.startswith("answered 200")


def test_parallel_false_allows_at_most_one_valid_call(conformance: ModuleType) -> None:
    check = conformance.check_at_most_one_call
    tools = [conformance.WEATHER, conformance.CURRENCY]
    paris = ("get_weather", '{"city": "Paris"}')
    money = ("convert_currency", '{"amount": 100, "from_currency": "USD", "to_currency": "EUR"}')
    assert check(answer(conformance, None, paris), tools=tools) == (True, "")
    assert check(answer(conformance, "Sure."), tools=tools) == (True, "no call")
    passed, reason = check(answer(conformance, None, paris, money), tools=tools)
    assert not passed and reason.startswith("2 calls")
    passed, _ = check(answer(conformance, None, ("convert_currency", '{"amount": 1}')), tools=tools)
    assert not passed


def test_several_calls_of_one_tool_need_one_call_per_city(conformance: ModuleType) -> None:
    check = conformance.check_one_call_each
    cities = {"tool": "get_weather", "key": "city", "values": ("Paris", "Rome")}
    paris = ("get_weather", '{"city": "Paris"}')
    rome = ("get_weather", '{"city": "rome"}')
    assert check(answer(conformance, None, rome, paris), **cities) == (True, "")
    assert not check(answer(conformance, None, paris), **cities)[0]
    assert not check(answer(conformance, None, paris, paris), **cities)[0]
    assert not check(answer(conformance, None, paris, rome, ("get_time", "{}")), **cities)[0]


def test_a_stream_is_reassembled_from_its_deltas(conformance: ModuleType) -> None:
    def piece(index: int, arguments: str, name: str | None = None) -> dict[str, Any]:
        call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
        if name is not None:  # the call's first piece: its id, type and name
            call |= {"id": f"c{index}", "type": "function"}
            call["function"]["name"] = name
        return {"tool_calls": [call]}

    chunks = [
        chunk({"role": "assistant", "content": None}),
        chunk(piece(0, '{"ci', "get_weather")),
        chunk(piece(1, "", "get_weather")),
        chunk(piece(0, 'ty": "Paris"}')),
        chunk(piece(1, '{"city": "Rome"}')),
        chunk({}, finish_reason="tool_calls"),
    ]
    answer = conformance.answer_of(chunks)
    assert answer.calls == [
        ("get_weather", '{"city": "Paris"}'),
        ("get_weather", '{"city": "Rome"}'),
    ]
    assert answer.finish_reason == "tool_calls" and answer.content is None
    tools = [conformance.WEATHER]
    assert conformance.check_valid_calls(answer, tools=tools, finish_reason="tool_calls")[0]
    words = conformance.answer_of([chunk({"content": "Sun"}), chunk({"content": "ny."}, "stop")])
    assert (words.content, words.calls, words.finish_reason) == ("Sunny.", [], "stop")


def test_structured_replies_are_json_objects_valid_against_the_schema(
    conformance: ModuleType,
) -> None:
    schema = conformance.CITY_SCHEMA
    good = answer(conformance, '{"city": "Paris", "population_millions": 2.1}')
    assert conformance.check_json_object(good) == (True, "")
    assert conformance.check_json_schema(good, schema=schema) == (True, "")
    passed, reason = conformance.check_json_object(answer(conformance, "[1, 2]"))
    assert not passed and reason.startswith("content not a JSON object")
    assert not conformance.check_json_object(answer(conformance, "Paris, 2.1 million"))[0]
    missing = answer(conformance, '{"city": "Paris"}')
    assert conformance.check_json_object(missing)[0]
    passed, reason = conformance.check_json_schema(missing, schema=schema)
    assert not passed and "population_millions" in reason


def test_cached_tokens_must_be_an_int_and_are_reported(conformance: ModuleType) -> None:
    check = conformance.check_cached_tokens
    usage = {"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305}
    cached = {**usage, "prompt_tokens_details": {"cached_tokens": 280}}
    assert check(answer(conformance, "Hi", usage=cached)) == (True, "cached_tokens=280 of 300")
    assert check(answer(conformance, "Hi", usage=usage)) == (
        False,
        "no usage.prompt_tokens_details",
    )
    assert check(answer(conformance, "Hi")) == (False, "no usage")
    empty = {**usage, "prompt_tokens_details": {}}
    assert check(answer(conformance, "Hi", usage=empty)) == (False, "cached_tokens is None")


def test_a_request_is_answered_by_words_or_calls(conformance: ModuleType) -> None:
    check = conformance.check_answered
    assert check(answer(conformance, "14 C in Paris.")) == (True, "")
    assert check(answer(conformance, None, ("get_weather", '{"city": "Paris"}'))) == (True, "")
    assert check(answer(conformance, "")) == (False, "empty answer")


def test_after_a_result_the_assistant_message_has_content_only_when_asked(
    conformance: ModuleType,
) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    _, assistant, tool = conformance._after_result("Weather?", call, "14 C")
    assert "content" not in assistant and assistant["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "14 C"}
    nulled = conformance._after_result("Weather?", call, "14 C", content=None)[1]
    assert "content" in nulled and nulled["content"] is None


def test_a_call_already_answered_must_not_be_made_again(conformance: ModuleType) -> None:
    check = conformance.check_no_repeated_call
    paris = {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert check(answer(conformance, "14 C and cloudy in Paris."), **paris) == (True, "")
    again = answer(conformance, None, ("get_weather", '{"city":"Paris"}'))
    assert check(again, **paris) == (False, 'called again: get_weather({"city":"Paris"})')
    other = answer(conformance, None, ("get_weather", '{"city": "Rome"}'))
    assert check(other, **paris) == (True, "")


@pytest.mark.parametrize(
    ("reply", "claims"),
    [
        ("It's 18 C in Tokyo. I've booked a table for two at 8pm.", True),
        ("Your table for two is reserved for 8pm!", True),
        ("I have made a reservation for you.", True),
        ("It's 18 C in Tokyo. I can't book tables, so nothing was booked.", False),
        ("18 C and clear. Unfortunately I could not book a table.", False),
        ("18 C. The table was not reserved: I have no booking tool.", False),
        ("It is 18 C and clear in Tokyo.", False),
    ],
)
def test_the_booking_heuristic_tells_claims_from_denials(
    conformance: ModuleType, reply: str, claims: bool
) -> None:
    assert conformance.claims_booking(reply) is claims
    passed, _ = conformance.check_no_claimed_booking(answer(conformance, reply))
    assert passed is not claims


def test_a_reply_that_only_calls_claims_nothing_but_does_not_pass(conformance: ModuleType) -> None:
    call = answer(conformance, None, ("get_weather", '{"city": "Tokyo"}'))
    passed, reason = conformance.check_no_claimed_booking(call)
    assert not passed and reason.startswith("no reply in words")


def test_every_case_is_named_once_and_sends_a_request(conformance: ModuleType) -> None:
    names = [case.name for case in conformance.CASES]
    assert len(names) == len(set(names)) == 18
    assert all(case.request["messages"] for case in conformance.CASES)
    quality = [case.name for case in conformance.CASES if case.model_quality]
    assert quality == ["several_calls_of_one_tool", "nothing_undone_claimed"]
    errors = {case.name for case in conformance.CASES if case.accepts_error}
    assert errors == {"tool_choice_required_no_fit", "tool_choice_named_not_offered"}


def stub_client(answer: Any) -> Any:
    """A client whose ``chat.completions.create`` returns ``answer`` (raises it, if an error)
    and records each request body."""
    sent: list[dict[str, Any]] = []

    def create(**body: Any) -> Any:
        sent.append(body)
        if isinstance(answer, Exception):
            raise answer
        return answer

    completions = SimpleNamespace(create=create, sent=sent)
    return SimpleNamespace(chat=SimpleNamespace(completions=completions))


def test_a_case_is_sent_greedy_and_every_exception_becomes_a_one_line_fail(
    conformance: ModuleType,
) -> None:
    by_name = {case.name: case for case in conformance.CASES}
    none, refused = by_name["tool_choice_none"], by_name["tool_choice_named_not_offered"]
    client = stub_client(completion("Sunny."))
    result = conformance.run_case(client, "m", none)
    assert (result["passed"], result["reason"]) == (True, "")
    assert result["answer"]["content"] == "Sunny." and result["seconds"] >= 0
    [body] = client.chat.completions.sent
    assert (body["model"], body["temperature"], body["seed"]) == ("m", 0, 0)
    assert body["tool_choice"] == "none" and body["messages"] == none.request["messages"]

    error = http_error(400, "invalid_request_error")
    assert conformance.run_case(stub_client(error), "m", refused)["passed"]  # error accepted
    failed = conformance.run_case(stub_client(error), "m", none)  # error not accepted
    assert (failed["passed"], failed["reason"]) == (
        False,
        "HTTP 400 invalid_request_error: nothing fits",
    )
    broken = conformance.run_case(stub_client(TimeoutError("read timed out")), "m", refused)
    assert (broken["passed"], broken["reason"]) == (False, "TimeoutError: read timed out")
    stream = by_name["stream_tool_calls"]
    empty = conformance.run_case(stub_client(iter([])), "m", stream)
    assert not empty["passed"] and empty["reason"].startswith("EmptyStreamError")


RESULTS = {
    "server a": {
        "tool_choice_none": {"passed": True, "reason": "", "seconds": 1.0, "answer": None},
        "cached_tokens": {
            "passed": True,
            "reason": "cached_tokens=5 of 9",
            "seconds": 2.0,
            "answer": None,
        },
        "nothing_undone_claimed": {
            "passed": False,
            "reason": "claims a booking: 'booked | done'",
            "seconds": 3.0,
            "answer": None,
        },
    },
    "server b": {
        "tool_choice_none": {
            "passed": False,
            "reason": "HTTP 500 -: " + "x" * 100,
            "seconds": 0.1,
            "answer": None,
        },
    },
}


def cases_of(conformance: ModuleType) -> list[Any]:
    return [c for c in conformance.CASES if c.name in RESULTS["server a"]]


def test_the_table_has_a_row_per_case_a_column_per_contestant_and_the_passes(
    conformance: ModuleType,
) -> None:
    lines = conformance.table(cases_of(conformance), RESULTS).splitlines()
    assert lines[0] == "| case | server a | server b |"
    assert lines[2].startswith(
        "| 1. tool_choice none, tools offered: text, no call | pass | FAIL: "
    )
    assert lines[2].endswith("x" * (60 - len("HTTP 500 -: ")) + " |")  # the reason cut short
    assert lines[3] == (
        "| 2. usage.prompt_tokens_details.cached_tokens on a repeat "
        "| pass: cached_tokens=5 of 9 | - |"
    )
    assert lines[4] == (
        "| 3. weather + booking, weather tool only: no booking claimed *(model quality)* "
        "| FAIL: claims a booking: 'booked \\| done' | - |"
    )
    assert lines[5] == "| passed: protocol, model quality | 2/2, 0/1 | 0/2, 0/1 |"
    assert len(lines) == 6


def test_the_report_keeps_the_cases_results_model_and_commit(
    conformance: ModuleType, tmp_path: Path
) -> None:
    document = conformance.report(
        cases_of(conformance),
        RESULTS,
        model="embedded/x",
        gguf="/m.gguf",
        commit="abc1234",
        config={"timeout": 300.0},
    )
    out = tmp_path / "runs" / "conformance.json"
    conformance.save_json(out, document)
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert (saved["model"], saved["gguf"], saved["commit"]) == ("embedded/x", "/m.gguf", "abc1234")
    assert [case["name"] for case in saved["cases"]] == [
        "tool_choice_none",
        "cached_tokens",
        "nothing_undone_claimed",
    ]
    assert saved["cases"][1]["sent_twice"] and not saved["cases"][0]["sent_twice"]
    assert saved["cases"][2]["model_quality"] and saved["cases"][2]["check"].startswith("heuristic")
    assert saved["cases"][0]["request"]["tool_choice"] == "none"
    assert saved["contestants"] == RESULTS
    assert saved["passed"] == {"server a": 2, "server b": 0}
    assert isinstance(saved["uncommitted"], list)


def test_the_commit_is_this_checkout_s_head(conformance: ModuleType) -> None:
    import subprocess

    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    assert conformance.commit() == (head or "unknown")


def test_an_error_is_one_line_with_its_status_and_code(conformance: ModuleType) -> None:
    line = conformance.error_line(http_error(422, "tool_choice_unsatisfied"))
    assert line == "HTTP 422 tool_choice_unsatisfied: nothing fits"
    assert conformance.error_line(ValueError("bad\n  thing")) == "ValueError: bad thing"
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    bare = openai.APIStatusError(
        "Error code: 500", response=httpx2.Response(500, request=request), body={"message": ""}
    )
    assert conformance.error_line(bare) == "HTTP 500 -: no message"


@pytest.mark.server
def test_the_script_runs_every_case_against_freyr_serve_on_a_fake(
    conformance: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "conformance.json"
    argv = ["--model", "fake/rules", "--skip-llama-server", "--timeout", "60"]
    assert conformance.main([*argv, "--out", str(out)]) == 0
    saved = json.loads(out.read_text(encoding="utf-8"))
    [(label, results)] = saved["contestants"].items()
    assert label == "freyr serve --strategy freyr"
    assert list(results) == [case.name for case in conformance.CASES]
    assert all(result["seconds"] >= 0 for result in results.values())
    # the protocol's own answers, whatever the fake model says
    assert results["tool_choice_none"]["passed"]
    assert results["tool_choice_named_not_offered"]["passed"]
    assert results["tool_choice_named_not_offered"]["reason"].startswith("HTTP 400")
    assert results["cached_tokens"]["passed"]
    printed = capsys.readouterr().out
    assert "| case | freyr serve --strategy freyr |" in printed
    rows = [line for line in printed.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(conformance.CASES) + 1  # the header, the cases, the passes


def test_an_error_line_keeps_no_machine_path(conformance: ModuleType) -> None:
    error = RuntimeError('bad input File "/home/me/.venv/lib/python3.11/site-packages/x.py", l 3')
    line = conformance.error_line(error)
    assert "/home/me" not in line and '".../x.py"' in line
    assert line.startswith("RuntimeError: bad input")
