"""A reply claims only what a call did: sentences no call stands behind are dropped and named."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import CallRecord, OpenAsk, Outcome
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._claims import (
    CallWords,
    asked_in,
    claims_done,
    sentences,
    unbacked_sentences,
)
from freyr_dspy.strategies._replies import outcomes_text
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: 22 C, sunny"


BOX = Toolbox([Tool.from_function(get_weather)])
WEATHER = CallRecord(
    tool="get_weather", arguments={"city": "Tokyo"}, outcome=Outcome(ok=True, message="22 C, sunny")
)
REQUEST = "What's the weather in Tokyo, and book me a table for two at 8pm?"


def test_a_sentence_no_call_stands_behind_is_found() -> None:
    reply = "Weather in Tokyo: 22 C, sunny. Booked a table for two at 8pm."
    assert unbacked_sentences(reply, [WEATHER]) == ["Booked a table for two at 8pm."]
    # what a call did, said in other words, or a decline, an offer, a question: kept
    kept = (
        "It is sunny in Tokyo today. I could not book a table: no tool does that. "
        "Would you like the forecast for tomorrow?"
    )
    assert unbacked_sentences(kept, [WEATHER]) == []
    assert asked_in(REQUEST, "Booked a table for two at 8pm.") == "book me a table for two at 8pm"
    assert asked_in(REQUEST, "Have a nice evening.") is None
    # the summary's outcomes list asks not done: their words stand behind nothing
    outcomes = outcomes_text([WEATHER], [OpenAsk(ask="book a table", reason="no tool")])
    behind = CallWords.of_text(outcomes)
    assert behind.stand_behind("Tokyo is sunny.")
    assert not behind.stand_behind("Booked a table.")


def test_a_claim_of_something_done_needs_a_call_that_succeeded() -> None:
    """Only a pin planned, and it failed: neither the pin nor a delete was done."""
    failed = CallRecord(
        tool="pin_note",
        arguments={"note_id": "running-plan"},
        outcome=Outcome(ok=False, message="pin_note failed: no note running-plan"),
    )
    reply = "Note 'running-plan' pinned successfully. Deleted the dentist note."
    tools = ["pin_note", "delete_note", "append_text"]
    assert unbacked_sentences(reply, [failed], tools) == sentences(reply)
    # what the failure was is no claim of success
    assert unbacked_sentences("The running-plan note was not found.", [failed], tools) == []
    pinned = failed.model_copy(update={"outcome": Outcome(ok=True, message="note-6 pinned")})
    # a participle naming an offered tool that no call ran ("Deleted") stays a claim ...
    assert unbacked_sentences("Pinned note-6. Deleted the dentist note.", [pinned], tools) == [
        "Deleted the dentist note."
    ]
    # ... while one that names no tool may say what a call did in other words
    appended = CallRecord(
        tool="append_text",
        arguments={"note_id": "note-2", "text": "passport"},
        outcome=Outcome(ok=True, message="note-2 text updated"),
    )
    assert unbacked_sentences("Added 'passport' to your note.", [appended], tools) == []
    # a participle of an offered tool's action, wherever it says what was done
    listing = CallRecord(
        tool="list_notes",
        arguments={"tag": "health"},
        outcome=Outcome(ok=True, message='[{"id": "note-5", "title": "Dentist questions"}]'),
    )
    reply = "Note 'Dentist questions' deleted. Your notes tagged 'health' have been listed."
    assert unbacked_sentences(reply, [listing, failed], [*tools, "list_notes"]) == [
        "Note 'Dentist questions' deleted."
    ]
    # the outcomes as the summary is shown them: an ERROR line did nothing
    behind = CallWords.of_text(outcomes_text([failed], []))
    assert not behind.stand_behind("Pinned successfully.")
    assert behind.stand_behind("The note running-plan was not found.")


@pytest.mark.parametrize(
    ("sentence", "claims"),
    [
        ("I've booked your table for two.", True),
        ("Your alarm is set for 7.", True),
        ("Done!", True),
        ("Sent the email to Ann.", True),
        ("Hello! How can I help?", False),
        ("I'm sorry, I can't book tables.", False),
        ("The capital of France is Paris.", False),
        ("Shall I book it for you?", False),
    ],
)
def test_a_chat_reply_that_says_something_was_done_is_a_claim(sentence: str, claims: bool) -> None:
    assert claims_done(sentence) is claims


def _program(answers: dict[str, Any], strategy: str = "freyr") -> FreyrProgram:
    def answer(call: FakeCall) -> Any:
        return answers[call.role]

    program = FreyrProgram(toolbox=BOX, strategy=make_strategy(strategy))
    program.set_lm(dspy.LM("fake/claims", engine=FunctionLM(answer), cache=False))
    return program


def test_the_summary_never_claims_an_action_no_call_took() -> None:
    program = _program(
        {
            "intent": {"intents": ["get_weather"]},
            "parameters": {"arguments": {"city": "Tokyo"}},
            "summary": {"reply": "Weather in Tokyo: 22 C, sunny. Booked a table for two at 8pm."},
        }
    )
    result = program(message=REQUEST).result
    assert [c.tool for c in result.calls] == ["get_weather"]
    assert "Booked" not in result.reply and result.reply.startswith("Weather in Tokyo: 22 C")
    assert [a.ask for a in result.open_asks] == ["book me a table for two at 8pm"]
    assert 'I could not do "book me a table for two at 8pm"' in result.reply
    assert result.unsupported == ["Booked a table for two at 8pm."]


def test_a_chat_reply_never_claims_an_action_when_no_call_was_made() -> None:
    program = _program(
        {
            "intent": {"intents": ["conversation"]},
            "chat": {"reply": "Sure! I've booked a table for two at 8pm. Enjoy your dinner."},
        }
    )
    result = program(message="Book me a table for two at 8pm.").result
    assert result.calls == [] and "booked" not in result.reply.casefold()
    assert [a.ask for a in result.open_asks] == ["Book me a table for two at 8pm"]
    assert result.reply.startswith("Sure!") and "I could not do" in result.reply
