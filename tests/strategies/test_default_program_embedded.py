"""The default program's behaviours on the real fast model (Qwen2.5-Coder-0.5B, greedy).

Each behaviour is also tested on fakes (test_claims.py, test_formats.py); here the real model
writes what it writes, and the property must hold whatever that is.
"""

from __future__ import annotations

import re

import pytest

from freyr_dspy.backends import is_installed, shared_engine
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import FAST_MODEL
from freyr_dspy.strategies._claims import claims_done, sentences
from freyr_dspy.tools import Tool, Toolbox

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        not is_installed(FAST_MODEL), reason="the Qwen 0.5B parts are not installed"
    ),
]

GREEDY = {"temperature": 0, "seed": 0}


def get_weather(location: str) -> str:
    """Get current temperature for a given location.

    Args:
        location: City and country e.g. Bogotá, Colombia
    """
    return f"{location}: 22 C, sunny"


def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency to another.

    Args:
        amount: how much.
        source: the currency it is in, e.g. 'USD'.
        target: the currency wanted, e.g. 'EUR'.
    """
    return f"{amount} {source} = {round(amount * 0.92, 2)} {target}"


def add_todo(title: str) -> str:
    """Add a task to the to-do list.

    Args:
        title: what the task says.
    """
    return f"added '{title}'"


BOX = Toolbox([Tool.from_function(f) for f in (get_weather, convert_currency, add_todo)])


@pytest.fixture
def program() -> FreyrProgram:
    # NOTE: other tests' prompts in the shared engine's prefix cache change the last digits of
    # llama.cpp's logits; a close call of the 0.5B could flip on them.
    shared_engine(FAST_MODEL).forget_prompts()
    return FreyrProgram.for_model(FAST_MODEL, toolbox=BOX, sampling=GREEDY)


def test_a_reply_never_claims_the_booking_no_tool_made(program: FreyrProgram) -> None:
    message = "What's the weather in Tokyo, and book me a table for two at 8pm?"
    result = program(message=message).result
    booking = re.compile(r"\b(book|booked|table|reserv)", re.IGNORECASE)
    for sentence in sentences(result.reply):
        if booking.search(sentence):
            # a sentence about the table may only say it was not done
            assert re.search(r"\b(not|n't|cannot|unable|no tool)\b", sentence, re.I), result.reply
            assert not claims_done(sentence), result.reply
    assert all(call.tool != "add_todo" for call in result.calls)


def test_a_value_is_written_in_the_form_the_description_shows(program: FreyrProgram) -> None:
    result = program(message="What is the weather like in Paris today?", calls_only=True).result
    [call] = [c for c in result.calls if c.outcome.ok]
    assert call.tool == "get_weather"
    # "City and country e.g. Bogotá, Colombia": refused once as "Paris", written again
    assert "paris" in call.arguments["location"].lower()
    assert "," in call.arguments["location"] or call.attempts > 1


CONVERT_THEN_TODO = "Convert 100 USD to EUR and add a todo titled 'pay' with the converted amount"


def test_a_call_that_points_at_a_result_takes_it_or_is_written_again(
    program: FreyrProgram,
) -> None:
    result = program(message=CONVERT_THEN_TODO, calls_only=True).result
    converted = [c for c in result.calls if c.tool == "convert_currency" and c.outcome.ok]
    todos = [c for c in result.calls if c.tool == "add_todo" and c.outcome.ok]
    assert converted and todos, result.calls
    # the conversion returned "100.0 USD = 92.0 EUR": the todo made after it carries the
    # amount, or was refused once for leaving it out and written again
    assert "92" in todos[0].arguments["title"] or todos[0].errors, todos[0]
