"""``stream: true`` streams while the program runs: words as the reply role writes them, each
tool call once it is made, and what the answer holds beyond them at the end."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import Answer, FakeCall
from tests.support.serve_helpers import (
    ARGUMENTS,
    ASK_WEATHER,
    CHAT_REPLY,
    TOOLS,
    answer,
    make_program,
    serving,
)

pytestmark = pytest.mark.server

BOTH = [{"role": "user", "content": "Tell me the weather and the time in Paris"}]
WAIT = 10.0


class Gate:
    """Holds the fake model once, until the test has seen what it wants to see.

    ``after``: pieces of the streamed answer let through first (``{"re``, ``ply"``, ``: "H``
    and ``ello``: the reply has begun).
    """

    def __init__(self, after: int = 4) -> None:
        self.after = after
        self.reached = threading.Event()
        self.opened = threading.Event()

    def hold(self) -> None:
        self.after -= 1
        if self.after == 0:
            self.reached.set()
            assert self.opened.wait(WAIT), "the test never opened the gate"


def client(base_url: str) -> OpenAI:
    return OpenAI(base_url=base_url, api_key="-", max_retries=0)


@pytest.fixture
def gate() -> Gate:
    return Gate()


def served(
    gate: Gate | None = None, fn: Callable[[FakeCall], Answer | None] = answer, **options: Any
) -> Any:
    program, _ = make_program(fn, between_pieces=gate.hold if gate else None)
    return serving(ServedProgram("weather", program), **options)


def deltas(stream: Iterator[Any]) -> Iterator[Any]:
    for chunk in stream:
        yield from (choice.delta for choice in chunk.choices)


def test_the_reply_arrives_while_the_chat_role_is_still_writing_it(gate: Gate) -> None:
    with served(gate) as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=ASK_WEATHER, stream=True
        )
        pieces = []
        for delta in deltas(stream):
            if delta.content:
                if not pieces:  # the words came, and the model is still held halfway
                    assert gate.reached.wait(WAIT) and not gate.opened.is_set()
                    gate.opened.set()
                pieces.append(delta.content)
    assert "".join(pieces) == CHAT_REPLY
    assert len(pieces) > 3  # the words came as the model wrote them, not in one piece


THREE = [{"role": "user", "content": "Weather and time in Paris, and is it a holiday in France?"}]
HOLIDAY = {
    "type": "function",
    "function": {
        "name": "is_holiday",
        "description": "Whether today is a public holiday in a country.",
        "parameters": {
            "type": "object",
            "properties": {"country": {"type": "string"}},
            "required": ["country"],
        },
    },
}


def test_a_tool_call_is_sent_while_the_program_still_makes_the_calls_after_it() -> None:
    # a call goes out one record late (its id must say whether a later call waits), so the
    # first call is out while the third is still being written
    gate = Gate(after=1)

    def three_calls(call: FakeCall) -> Answer | None:
        if call.role == "intent":
            return {"intents": ["get_weather", "get_time", "is_holiday"]}
        if call.role == "parameters" and "is_holiday" in call.inputs.get("tool", ""):
            gate.hold()
            return {"arguments": {"country": "France"}}
        return answer(call)

    with served(fn=three_calls) as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=THREE, tools=[*TOOLS, HOLIDAY], stream=True
        )
        calls: dict[int, dict[str, str]] = {}
        finish = None
        for chunk in stream:
            for choice in chunk.choices:
                finish = choice.finish_reason or finish
                for delta in choice.delta.tool_calls or []:
                    if not calls:  # get_weather is out while is_holiday is being written
                        assert gate.reached.wait(WAIT) and not gate.opened.is_set()
                        gate.opened.set()
                    entry = calls.setdefault(delta.index, {"name": "", "arguments": ""})
                    entry["name"] += (delta.function and delta.function.name) or ""
                    entry["arguments"] += (delta.function and delta.function.arguments) or ""
    assert finish == "tool_calls"
    made = [(c["name"], json.loads(c["arguments"])) for c in calls.values()]
    assert made == [*ARGUMENTS.items(), ("is_holiday", {"country": "France"})]


def test_a_streamed_call_before_one_that_waits_carries_the_waiting_id() -> None:
    # "find where I am, then the weather there": the weather call has no city to give yet
    def lookup_then_weather(call: FakeCall) -> Answer | None:
        if call.role == "intent":
            return {"intents": ["get_time", "get_weather"]}
        if call.role == "parameters" and "get_weather" in call.inputs.get("tool", ""):
            return {"arguments": {"location": "London"}}  # stated nowhere: it must wait
        return answer(call)

    ask = [{"role": "user", "content": "What time is it in Paris, then the weather where I am?"}]
    with served(fn=lookup_then_weather) as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=ask, tools=TOOLS, stream=True
        )
        ids = [d.id for delta in deltas(stream) for d in delta.tool_calls or [] if d.id]
    # the client's results turn plans again, and makes the weather call that waited
    assert len(ids) == 1 and ids[0].endswith("_w.get_weather")


def summary_says(reply: str) -> Callable[[FakeCall], Answer | None]:
    def summarised(call: FakeCall) -> Answer | None:
        return {"reply": reply} if call.role == "summary" else answer(call)

    return summarised


def streamed_text(base: str, messages: list[dict[str, Any]]) -> str:
    stream = client(base).chat.completions.create(
        model="weather", messages=messages, tools=TOOLS, stream=True
    )
    return "".join(d.content or "" for d in deltas(stream))


def results_turn(base: str) -> list[dict[str, Any]]:
    first = client(base).chat.completions.create(model="weather", messages=ASK_WEATHER, tools=TOOLS)
    [call] = first.choices[0].message.tool_calls or []
    result = {"role": "tool", "tool_call_id": call.id, "content": "14 C and cloudy"}
    return [*ASK_WEATHER, first.choices[0].message.model_dump(exclude_none=True), result]


def test_a_summary_stating_the_results_streams_as_written() -> None:
    reply = "It is 14 C and cloudy in Paris."
    with served(fn=summary_says(reply)) as base:
        messages = results_turn(base)
        assert streamed_text(base, messages) == reply
        whole = client(base).chat.completions.create(
            model="weather", messages=messages, tools=TOOLS
        )
    assert whole.choices[0].message.content == reply


def test_a_summary_inventing_a_number_stops_before_it_and_the_checked_reply_follows() -> None:
    with served(fn=summary_says("It is 14 C in Paris, and 31 C in Rome.")) as base:
        messages = results_turn(base)
        streamed = streamed_text(base, messages)
        whole = client(base).chat.completions.create(
            model="weather", messages=messages, tools=TOOLS
        )
    checked = whole.choices[0].message.content or ""
    assert "31" not in checked  # the reply made from the results, as without streaming
    # a sentence goes out once it has ended and holds nothing invented: this one never did
    assert streamed == checked and "31" not in streamed


def test_a_summary_sentence_no_call_stands_behind_is_never_streamed() -> None:
    reply = "It is 14 C in Paris. Booked a table for you as well."
    with served(fn=summary_says(reply)) as base:
        messages = results_turn(base)
        streamed = streamed_text(base, messages)
        whole = client(base).chat.completions.create(
            model="weather", messages=messages, tools=TOOLS
        )
    checked = whole.choices[0].message.content or ""
    assert checked.startswith("It is 14 C in Paris.") and "Booked" not in checked
    assert streamed.startswith("It is 14 C in Paris.") and "Booked" not in streamed


def test_an_error_after_the_first_piece_ends_the_stream_with_an_error_event(gate: Gate) -> None:
    with served(gate, timeout=0.5) as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=ASK_WEATHER, stream=True
        )
        seen = []
        with pytest.raises(openai.APIError, match=r"did not answer within 0\.5 s"):
            for delta in deltas(stream):
                seen.append(delta.content or "")
        gate.opened.set()  # let the worker finish
    assert "".join(seen) and "".join(seen) != CHAT_REPLY


def test_required_sends_no_words_of_a_reply_it_will_not_give() -> None:
    hello = [{"role": "user", "content": "Hello there"}]
    with served() as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=hello, tools=TOOLS, tool_choice="required", stream=True
        )
        pieces = list(deltas(stream))
    assert not any(d.content for d in pieces)  # the chat role's reply was not the answer
    names = [c.function.name for d in pieces for c in d.tool_calls or [] if c.function.name]
    assert names == ["get_time"]


def test_words_instead_of_a_call_go_out_checked_never_the_invented_draft() -> None:
    # offered the weather tool, the model answers in words with a temperature it made up
    def words_with_a_made_up_figure(call: FakeCall) -> Answer | None:
        if call.role == "intent":
            return {"intents": ["conversation"]}
        if call.role == "chat":
            return {"reply": "The weather in Paris is sunny today, around 22 degrees."}
        return answer(call)

    with served(fn=words_with_a_made_up_figure) as base:
        stream = client(base).chat.completions.create(
            model="weather", messages=ASK_WEATHER, tools=TOOLS, stream=True
        )
        pieces = [d.content for d in deltas(stream) if d.content]
    assert "".join(pieces) == "I could not do that with the tools I have."
    assert not any("sunny" in piece for piece in pieces)
