"""Conformance side by side: the same OpenAI chat-completions cases to ``freyr serve`` and to
llama-cpp-python's own server, same GGUF, one table of pass/FAIL.

Each case is one small request (one to three simple tools of this file) judged by the protocol
where it can be: ``tool_choice`` ``none``, ``auto``, left out, ``required`` (a tool fits, or
none does) and named (and a name not offered), ``parallel_tool_calls: false``, streamed tool
calls, ``response_format`` (``json_object``, ``json_schema``, with tools too),
``usage.prompt_tokens_details.cached_tokens``, and the turn after tool results (the call
message with ``content: null``, no repeated call, no claim of what no tool did). Cases marked
*model quality* depend on what the model chooses more than on the server.

Contestants are started as in ``bench_serve_compare.py`` (its ``contestants`` and
``started``): ``python -m llama_cpp.server --model <gguf> --chat_format
chatml-function-calling``, then ``freyr serve`` per ``--program`` and ``--strategy``, one at a
time on 127.0.0.1, greedy (``temperature=0``, ``seed=0``), through the ``openai`` SDK with
``max_retries=0`` and a per-request ``--timeout``. An exception is a FAIL with a one-line
reason (the status and error code of an HTTP error).

Usage:
    python scripts/conformance_serve.py [--model embedded/qwen2.5-coder-0.5b | --gguf PATH]
        [--program compiled/calls-qwen0.5b.json] [--strategy freyr] [--skip-llama-server]
        [--timeout 300] [--out runs/conformance_serve.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

import jsonschema
from _bench import markdown_table, save_json
from bench_serve_compare import _model, add_contestant_options, contestants, started
from openai import APIStatusError, OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from freyr_dspy import __version__

MAX_TOKENS = 512
REQUEST_SECONDS = 300.0
REASON_CHARS = 60  # a table cell's reason; the JSON keeps the whole one

# --------------------------------------------------------------------------- tools


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


WEATHER = _tool("get_weather", "Current weather in a city.", {"city": {"type": "string"}})
CURRENCY = _tool(
    "convert_currency",
    "Convert an amount of money from one currency to another (ISO 4217 codes).",
    {
        "amount": {"type": "number"},
        "from_currency": {"type": "string"},
        "to_currency": {"type": "string"},
    },
)
TODO = _tool("add_todo", "Add an item to the user's todo list.", {"title": {"type": "string"}})

CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population_millions": {"type": "number"}},
    "required": ["city", "population_millions"],
    "additionalProperties": False,
}
REPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature_c": {"type": "number"},
        "summary": {"type": "string"},
    },
    "required": ["city", "temperature_c", "summary"],
    "additionalProperties": False,
}


def _json_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def _after_result(
    question: str, call: dict[str, Any], result: str, **assistant: Any
) -> list[dict[str, Any]]:
    """The question, the assistant's call ``{"name", "arguments"}``, and the tool's result.

    The assistant message has no ``content`` (as OpenAI allows next to ``tool_calls``) unless
    ``assistant`` gives one: ``content=None`` is how the SDK's own message objects dump it.
    """
    arguments = json.dumps(call["arguments"])
    tool_call = {"id": "call_1", "type": "function", "function": {**call, "arguments": arguments}}
    return [
        *_user(question),
        {"role": "assistant", "tool_calls": [tool_call], **assistant},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class Answer:
    """What a completion (or a reassembled stream) says: words, calls, finish reason, usage."""

    content: str | None
    calls: list[tuple[str, str]]  # (name, arguments as sent: a JSON text)
    finish_reason: str | None
    usage: Any = None


def answer_of(raw: ChatCompletion | list[ChatCompletionChunk]) -> Answer:
    """The first choice of a completion, or the reassembled choice of a stream's chunks."""
    if isinstance(raw, list):
        return reassemble(raw)
    choice = raw.choices[0]
    calls = [
        (call.function.name, call.function.arguments)
        for call in choice.message.tool_calls or []
        if call.type == "function"
    ]
    return Answer(choice.message.content, calls, choice.finish_reason, raw.usage)


def reassemble(chunks: list[ChatCompletionChunk]) -> Answer:
    """A stream's first choice put back together: content and each call's pieces concatenated
    by the call's ``index`` (as the SDK's own stream helpers do), the last finish reason."""
    content: list[str] = []
    names: dict[int, str] = {}
    arguments: dict[int, str] = {}
    finish, usage = None, None
    for chunk in chunks:
        usage = chunk.usage or usage
        for choice in chunk.choices[:1]:
            content.append(choice.delta.content or "")
            for call in choice.delta.tool_calls or []:
                name, pieces = (
                    (call.function.name, call.function.arguments) if call.function else ("", "")
                )
                names[call.index] = names.get(call.index, "") + (name or "")
                arguments[call.index] = arguments.get(call.index, "") + (pieces or "")
            finish = choice.finish_reason or finish
    calls = [(names[i], arguments.get(i, "")) for i in sorted(names)]
    return Answer("".join(content) or None, calls, finish, usage)


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return None


def _shown(calls: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name}({arguments})" for name, arguments in calls) or "no call"


def call_problem(name: str, arguments: str, tools: list[dict[str, Any]]) -> str | None:
    """Why a call is not one of ``tools`` with a JSON object valid against its schema, if so."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    if name not in schemas:
        return f"{name} is not offered"
    parsed = _parsed(arguments)
    if not isinstance(parsed, dict):
        return f"{name} arguments not a JSON object: {arguments[:40]}"
    try:
        jsonschema.validate(parsed, schemas[name])
    except jsonschema.ValidationError as error:
        return f"{name} arguments invalid: {error.message}"
    return None


def error_line(exc: Exception) -> str:
    """One line for an exception: ``HTTP status code: message`` for an HTTP error."""
    if isinstance(exc, APIStatusError):
        code = exc.code or getattr(exc, "type", None) or "-"
        body = exc.body if isinstance(exc.body, dict) else None  # the error object, if any
        message = (body.get("message") or "no message") if body is not None else exc.message
        return _one_line(f"HTTP {exc.status_code} {code}: {message}")
    return _one_line(f"{type(exc).__name__}: {exc}")


#: An absolute path in a server's error (a traceback's file): kept out of saved reports.
_PATH = re.compile(r"(?:/[\w.+-]+){2,}/")


def _one_line(text: str, limit: int = 300) -> str:
    return _PATH.sub(".../", " ".join(text.split()))[:limit]


def sdk_would_retry(exc: APIStatusError) -> bool:
    """Whether the ``openai`` SDK retries this status (with its default ``max_retries``): the
    server's ``x-should-retry`` header when it sends one, else 408, 409, 429 and 5xx."""
    header = exc.response.headers.get("x-should-retry")
    if header in ("true", "false"):
        return header == "true"
    return exc.status_code in (408, 409, 429) or exc.status_code >= 500


# --------------------------------------------------------------------------- checks

Verdict = tuple[bool, str]  # (passed, reason: why not, or what a pass is worth reporting)


def check_text_reply(answer: Answer) -> Verdict:
    """No ``tool_calls`` and a reply in words."""
    if answer.calls:
        return False, f"tool_calls: {_shown(answer.calls)}"
    if answer.finish_reason == "tool_calls":
        return False, "finish_reason tool_calls without calls"
    if not (answer.content or "").strip():
        return False, "empty content"
    return True, ""


def check_valid_calls(
    answer: Answer,
    *,
    tools: list[dict[str, Any]],
    only: str | None = None,
    finish_reason: str | None = None,
) -> Verdict:
    """At least one call; each names an offered tool (``only`` that one, when given) with a
    JSON object valid against its schema; ``finish_reason`` as given, when given."""
    if not answer.calls:
        words = _one_line(answer.content or "", 40)
        return False, f"no tool_calls (finish {answer.finish_reason}): {words!r}"
    for name, arguments in answer.calls:
        if only is not None and name != only:
            return False, f"called {name}, not {only}"
        if (problem := call_problem(name, arguments, tools)) is not None:
            return False, problem
    if finish_reason is not None and answer.finish_reason != finish_reason:
        return False, f"finish_reason {answer.finish_reason}, not {finish_reason}"
    return True, ""


def check_call_or_refusal(
    result: Answer | APIStatusError, *, tools: list[dict[str, Any]]
) -> Verdict:
    """``required`` where nothing fits: valid calls, or a 4xx the SDK does not retry; the
    reason says which it was."""
    if isinstance(result, APIStatusError):
        retried = sdk_would_retry(result)
        if 400 <= result.status_code < 500 and not retried:
            return True, f"refused: HTTP {result.status_code} {result.code or '-'}"
        return False, error_line(result) + (" (the SDK retries it)" if retried else "")
    passed, reason = check_valid_calls(result, tools=tools)
    return passed, f"called {', '.join(n for n, _ in result.calls)}" if passed else reason


def check_client_error(result: Answer | APIStatusError) -> Verdict:
    """A 4xx error (not a 5xx, not an answer, not a time-out)."""
    if isinstance(result, APIStatusError):
        return 400 <= result.status_code < 500, error_line(result)
    words = _one_line(result.content or "", 30)
    return False, f"answered 200: {_shown(result.calls)} {words!r}"


def check_at_most_one_call(answer: Answer, *, tools: list[dict[str, Any]]) -> Verdict:
    """``parallel_tool_calls: false``: no more than one call, and a valid one if there is one."""
    if len(answer.calls) > 1:
        return False, f"{len(answer.calls)} calls: {_shown(answer.calls)}"
    if not answer.calls:
        return True, "no call"
    [(name, arguments)] = answer.calls
    problem = call_problem(name, arguments, tools)
    return problem is None, problem or ""


def check_one_call_each(answer: Answer, *, tool: str, key: str, values: tuple[str, ...]) -> Verdict:
    """A call of ``tool`` for each of ``values`` (its ``key`` argument, any case), no other."""
    asked = []
    for name, arguments in answer.calls:
        parsed = _parsed(arguments)
        if name != tool or not isinstance(parsed, dict):
            return False, f"not a {tool} call: {_shown(answer.calls)}"
        asked.append(str(parsed.get(key, "")).strip().lower())
    if sorted(asked) != sorted(value.lower() for value in values):
        return False, f"{len(answer.calls)} call(s): {_shown(answer.calls)}"
    return True, ""


def check_json_object(answer: Answer) -> Verdict:
    """The content parses as a JSON object."""
    if not isinstance(_parsed(answer.content or ""), dict):
        return False, f"content not a JSON object: {_one_line(answer.content or '', 40)!r}"
    return True, ""


def check_json_schema(answer: Answer, *, schema: dict[str, Any]) -> Verdict:
    """The content is JSON valid against ``schema``."""
    passed, reason = check_json_object(answer)
    if not passed:
        return passed, reason
    try:
        jsonschema.validate(_parsed(answer.content or ""), schema)
    except jsonschema.ValidationError as error:
        return False, f"not valid against the schema: {error.message}"
    return True, ""


def check_answered(answer: Answer) -> Verdict:
    """Any answer at all (words or calls): the request was accepted."""
    if not answer.calls and not (answer.content or "").strip():
        return False, "empty answer"
    return True, ""


def check_cached_tokens(answer: Answer) -> Verdict:
    """``usage.prompt_tokens_details.cached_tokens`` is there and an int; the reason: its value."""
    usage = answer.usage
    if usage is None:
        return False, "no usage"
    details = usage.prompt_tokens_details
    if details is None:
        return False, "no usage.prompt_tokens_details"
    cached = details.cached_tokens
    if not isinstance(cached, int) or isinstance(cached, bool):
        return False, f"cached_tokens is {cached!r}"
    return True, f"cached_tokens={cached} of {usage.prompt_tokens}"


def check_no_repeated_call(answer: Answer, *, name: str, arguments: dict[str, Any]) -> Verdict:
    """After the call's result, the answer does not make the same call (same arguments) again."""
    for called, text in answer.calls:
        if called == name and _parsed(text) == arguments:
            return False, f"called again: {_shown([(called, text)])}"
    return True, ""


CLAIM = re.compile(
    r"\b(booked|reserved|reservation (is|has been) (made|confirmed)"
    r"|made (a|the|your) reservation)\b",
    re.IGNORECASE,
)
NEGATION = re.compile(r"\b(not|no|never|cannot|unable|without|unfortunately)\b|n['’]t\b", re.I)


def claims_booking(text: str) -> bool:
    """Whether ``text`` says a booking was made: a heuristic, not a judge.

    A sentence with "booked", "reserved" or "made a reservation" and no negation in it ("not",
    "can't", "unable", "unfortunately", ...) counts as a claim. It misses claims worded
    otherwise ("your table awaits"), and a sentence that negates anything at all ("no rain, and
    your table is booked") counts as no claim.
    """
    sentences = re.split(r"(?<=[.!?;])\s+|\n+", text)
    return any(CLAIM.search(s) and not NEGATION.search(s) for s in sentences)


def check_no_claimed_booking(answer: Answer) -> Verdict:
    """A reply in words that does not claim the booking no offered tool could make."""
    if not (answer.content or "").strip():
        return False, f"no reply in words ({_shown(answer.calls)})"
    if claims_booking(answer.content or ""):
        return False, f"claims a booking: {_one_line(answer.content or '', 50)!r}"
    return True, ""


# --------------------------------------------------------------------------- cases

Send = Callable[[OpenAI, dict[str, Any]], Any]


def send_once(client: OpenAI, body: dict[str, Any]) -> ChatCompletion:
    completion: ChatCompletion = client.chat.completions.create(**body)
    return completion


def send_streamed(client: OpenAI, body: dict[str, Any]) -> list[ChatCompletionChunk]:
    chunks = list(client.chat.completions.create(**body, stream=True))
    if not chunks:
        raise EmptyStreamError("the stream ended before its first chunk")
    return chunks


class EmptyStreamError(RuntimeError):
    """A streamed answer with no chunk at all (a server that failed after its 200)."""


def send_twice(client: OpenAI, body: dict[str, Any]) -> ChatCompletion:
    """The same request twice; the second answer (a prefix cache has seen the prompt)."""
    send_once(client, body)
    return send_once(client, body)


@dataclass(frozen=True)
class Case:
    """One request and its judge: ``check`` gets the :class:`Answer` (or, when
    ``accepts_error``, the ``APIStatusError``) and says (passed, reason)."""

    name: str
    title: str
    request: dict[str, Any]
    check: Callable[[Any], Verdict]
    send: Send = send_once
    accepts_error: bool = False
    model_quality: bool = False
    notes: dict[str, Any] = field(default_factory=dict)


PARIS = "What's the weather in Paris right now?"
NAMED_CURRENCY = {"type": "function", "function": {"name": "convert_currency"}}
PARIS_CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOKYO = "What's the weather in Tokyo, and book me a table for two at 8pm?"
TOKYO_CALL = {"name": "get_weather", "arguments": {"city": "Tokyo"}}
FRANCE = "What is the capital of France, and its population in millions?"

#: ``tool_choice: "auto"`` is sent wherever a case tests something else: OpenAI's default with
#: tools, but a server may default otherwise, which ``tool_choice_omitted`` tests on its own.
CASES = [
    Case(
        "tool_choice_none",
        "tool_choice none, tools offered: text, no call",
        {"messages": _user(PARIS), "tools": [WEATHER, CURRENCY], "tool_choice": "none"},
        check_text_reply,
    ),
    Case(
        "tool_choice_auto",
        "tool_choice auto, a tool fits: a valid call",
        {"messages": _user(PARIS), "tools": [WEATHER, CURRENCY, TODO], "tool_choice": "auto"},
        partial(check_valid_calls, tools=[WEATHER, CURRENCY, TODO], finish_reason="tool_calls"),
    ),
    Case(
        "tool_choice_omitted",
        "tools offered, no tool_choice (auto by default), a tool fits: a valid call",
        {"messages": _user(PARIS), "tools": [WEATHER, CURRENCY, TODO]},
        partial(check_valid_calls, tools=[WEATHER, CURRENCY, TODO], finish_reason="tool_calls"),
    ),
    Case(
        "tool_choice_required",
        "tool_choice required, a tool fits: a valid call",
        {
            "messages": _user("Add 'buy milk' to my todo list."),
            "tools": [WEATHER, TODO],
            "tool_choice": "required",
        },
        partial(check_valid_calls, tools=[WEATHER, TODO]),
    ),
    Case(
        "tool_choice_required_no_fit",
        "tool_choice required, nothing fits: a call or a 4xx not retried",
        {
            "messages": _user("Tell me a short joke about cats."),
            "tools": [WEATHER, CURRENCY],
            "tool_choice": "required",
        },
        partial(check_call_or_refusal, tools=[WEATHER, CURRENCY]),
        accepts_error=True,
    ),
    Case(
        "tool_choice_named",
        "tool_choice named convert_currency: only it is called",
        {
            "messages": _user("Convert 100 US dollars to euros."),
            "tools": [WEATHER, CURRENCY],
            "tool_choice": NAMED_CURRENCY,
        },
        partial(check_valid_calls, tools=[WEATHER, CURRENCY], only="convert_currency"),
    ),
    Case(
        "tool_choice_named_not_offered",
        "tool_choice names a tool not offered: 4xx",
        {
            "messages": _user("Book a table for two at 8pm."),
            "tools": [WEATHER],
            "tool_choice": {"type": "function", "function": {"name": "book_table"}},
        },
        check_client_error,
        accepts_error=True,
    ),
    Case(
        "parallel_tool_calls_false",
        "parallel_tool_calls false, two asks: at most one call",
        {
            "messages": _user("What's the weather in Paris, and what is 100 US dollars in euros?"),
            "tools": [WEATHER, CURRENCY],
            "tool_choice": "auto",
            "parallel_tool_calls": False,
        },
        partial(check_at_most_one_call, tools=[WEATHER, CURRENCY]),
    ),
    Case(
        "several_calls_of_one_tool",
        "weather in Paris and in Rome: two get_weather calls",
        {
            "messages": _user("What's the weather in Paris and in Rome?"),
            "tools": [WEATHER],
            "tool_choice": "auto",
        },
        partial(check_one_call_each, tool="get_weather", key="city", values=("Paris", "Rome")),
        model_quality=True,
    ),
    Case(
        "stream_tool_calls",
        "stream with tools: deltas reassemble to a valid call, finish tool_calls",
        {"messages": _user(PARIS), "tools": [WEATHER, CURRENCY], "tool_choice": "auto"},
        partial(check_valid_calls, tools=[WEATHER, CURRENCY], finish_reason="tool_calls"),
        send=send_streamed,
    ),
    Case(
        "response_format_json_object",
        "response_format json_object, no tools: a JSON object",
        {
            "messages": _user(
                "Give the capital of France and its country as a JSON object "
                "with the keys city and country."
            ),
            "response_format": {"type": "json_object"},
        },
        check_json_object,
    ),
    Case(
        "response_format_json_schema",
        "response_format json_schema, no tools: valid against it",
        {"messages": _user(FRANCE), "response_format": _json_schema("city", CITY_SCHEMA)},
        partial(check_json_schema, schema=CITY_SCHEMA),
    ),
    Case(
        "json_schema_with_tools_none",
        "json_schema, tools offered, tool_choice none: valid against it",
        {
            "messages": _user(FRANCE),
            "tools": [WEATHER],
            "tool_choice": "none",
            "response_format": _json_schema("city", CITY_SCHEMA),
        },
        partial(check_json_schema, schema=CITY_SCHEMA),
    ),
    Case(
        "json_schema_after_results",
        "json_schema after a tool result: valid against it",
        {
            "messages": _after_result(PARIS, PARIS_CALL, "14 C, cloudy"),
            "tools": [WEATHER],
            "tool_choice": "auto",
            "response_format": _json_schema("weather_report", REPORT_SCHEMA),
        },
        partial(check_json_schema, schema=REPORT_SCHEMA),
    ),
    Case(
        "cached_tokens",
        "usage.prompt_tokens_details.cached_tokens on a repeat",
        {"messages": _user(PARIS), "tools": [WEATHER, CURRENCY], "tool_choice": "auto"},
        check_cached_tokens,
        send=send_twice,
    ),
    Case(
        "assistant_content_null",
        "assistant call message with content null (as the SDK dumps it): accepted",
        {
            "messages": _after_result(PARIS, PARIS_CALL, "14 C, cloudy", content=None),
            "tools": [WEATHER],
            "tool_choice": "auto",
        },
        check_answered,
    ),
    Case(
        "no_repeated_call",
        "after the result: the same call is not made again",
        {
            "messages": _after_result(PARIS, PARIS_CALL, "14 C, cloudy"),
            "tools": [WEATHER],
            "tool_choice": "auto",
        },
        partial(check_no_repeated_call, **PARIS_CALL),
    ),
    Case(
        "nothing_undone_claimed",
        "weather + booking, weather tool only: no booking claimed",
        {
            "messages": _after_result(TOKYO, TOKYO_CALL, "18 C, clear skies"),
            "tools": [WEATHER],
            "tool_choice": "auto",
        },
        check_no_claimed_booking,
        model_quality=True,
        notes={"check": "heuristic: claims_booking()"},
    ),
]


# --------------------------------------------------------------------------- running


def run_case(client: OpenAI, model: str, case: Case) -> dict[str, Any]:
    """Send one case and judge it; any exception is a FAIL with a one-line reason."""
    body = {"model": model, "temperature": 0, "seed": 0, "max_tokens": MAX_TOKENS}
    began = time.perf_counter()
    answer: Any = None
    try:
        raw = case.send(client, body | case.request)
        answer = describe(raw)
        passed, reason = case.check(answer_of(raw))
    except APIStatusError as exc:
        answer = error_line(exc)
        passed, reason = case.check(exc) if case.accepts_error else (False, error_line(exc))
    except Exception as exc:  # a time-out, a dropped connection, an answer the SDK cannot read
        passed, reason = False, error_line(exc)
    seconds = round(time.perf_counter() - began, 3)
    return {"passed": passed, "reason": reason, "seconds": seconds, "answer": answer}


def describe(raw: ChatCompletion | list[ChatCompletionChunk]) -> dict[str, Any]:
    """An answer as JSON for the report: content, calls, finish reason, cached tokens."""
    answer = answer_of(raw)
    details = answer.usage and answer.usage.prompt_tokens_details
    return {
        "content": answer.content,
        "tool_calls": [list(call) for call in answer.calls],
        "finish_reason": answer.finish_reason,
        "cached_tokens": details.cached_tokens if details else None,
        "chunks": len(raw) if isinstance(raw, list) else None,
    }


def run_contestant(base: str, model: str, timeout: float) -> dict[str, dict[str, Any]]:
    """Every case against one running server, by case name; each case on a client of its own,
    so a connection one case broke (a stream cut off) is not reused by the next."""
    results = {}
    for number, case in enumerate(CASES, 1):
        with OpenAI(base_url=base, api_key="-", max_retries=0, timeout=timeout) as client:
            result = run_case(client, model, case)
        results[case.name] = result
        mark = "pass" if result["passed"] else "FAIL"
        print(f"  [{number}/{len(CASES)}] {mark} {case.name} {result['reason']}", file=sys.stderr)
    return results


def cell(result: dict[str, Any] | None) -> str:
    """A table cell: pass, or FAIL with a short reason; a pass's note when it has one."""
    if result is None:
        return "-"
    reason = _one_line(result["reason"], REASON_CHARS).replace("|", "\\|")
    word = "pass" if result["passed"] else "FAIL"
    return f"{word}: {reason}" if reason else word


def table(cases: list[Case], results: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The markdown table: a row per case, a column per contestant, and the passes counted."""
    labels = list(results)
    rows: list[list[object]] = []
    for number, case in enumerate(cases, 1):
        title = f"{number}. {case.title}" + (" *(model quality)*" if case.model_quality else "")
        rows.append([title, *(cell(results[label].get(case.name)) for label in labels)])
    groups = [[c for c in cases if not c.model_quality], [c for c in cases if c.model_quality]]
    totals = ["passed: protocol, model quality"]
    for label in labels:
        counts = [_passes(results[label], group) for group in groups]
        totals.append(", ".join(f"{n}/{len(g)}" for n, g in zip(counts, groups, strict=True)))
    return "\n".join(markdown_table(["case", *labels], [*rows, totals]))


def _passes(by_case: dict[str, dict[str, Any]], cases: list[Case]) -> int:
    return sum(by_case.get(case.name, {}).get("passed", False) for case in cases)


def report(
    cases: list[Case],
    results: dict[str, dict[str, dict[str, Any]]],
    *,
    model: str,
    gguf: str,
    commit: str,
    config: dict[str, Any],
) -> dict[str, Any]:
    """What ``--out`` holds: the cases, each contestant's result per case, and provenance."""
    return {
        "about": "scripts/conformance_serve.py: OpenAI chat-completions conformance cases",
        "model": model,
        "gguf": gguf,
        "commit": commit,
        "freyr_version": __version__,
        "uncommitted": uncommitted(),
        "config": config,
        "cases": [
            {
                "name": case.name,
                "title": case.title,
                "model_quality": case.model_quality,
                "streamed": case.send is send_streamed,
                "sent_twice": case.send is send_twice,
                "accepts_error": case.accepts_error,
                "request": case.request,
                **case.notes,
            }
            for case in cases
        ],
        "contestants": results,
        "passed": {
            label: sum(r["passed"] for r in by_case.values()) for label, by_case in results.items()
        },
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }


ROOT = Path(__file__).resolve().parents[1]


def commit() -> str:
    """``git rev-parse --short HEAD`` of this checkout, or ``unknown``."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def uncommitted() -> list[str]:
    """The changed files under ``freyr_dspy/``: the servers ran the working tree, not HEAD."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--", "freyr_dspy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return [line.strip() for line in done.stdout.splitlines()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_contestant_options(parser)
    parser.add_argument("--timeout", type=float, default=REQUEST_SECONDS, help="s per request")
    parser.add_argument("--out", type=Path, default=Path("runs/conformance_serve.json"))
    args = parser.parse_args(argv)
    gguf, model_id = _model(args)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for index, contestant in enumerate(contestants(args, gguf, model_id)):
        print(f"{contestant.label}: {len(CASES)} cases", file=sys.stderr)
        log = args.out.with_name(f"{args.out.stem}.server{index}.log")
        with started(contestant, log) as base:
            results[contestant.label] = run_contestant(base, contestant.model, args.timeout)
    print(table(CASES, results))
    config = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    document = report(
        CASES, results, model=model_id, gguf=Path(gguf).name, commit=commit(), config=config
    )
    save_json(args.out, document)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
