"""Values in the form a tool's description shows: refused once when written another way."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._formats import fits, misformed, shown_forms, unquoted_examples
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def set_alarm(time: str, label: str = "") -> str:
    """Set an alarm.

    Args:
        time: 24-hour time HH:MM, e.g. '07:30'.
        label: what the alarm is for.
    """
    return f"alarm at {time}"


def weather(location: str) -> str:
    """Weather for a place.

    Args:
        location: the place, e.g. 'San Francisco, CA'.
    """
    return f"sunny in {location}"


BOX = Toolbox([Tool.from_function(set_alarm), Tool.from_function(weather)])


@pytest.mark.parametrize(
    ("value", "example", "fit"),
    [
        ("Tokyo", "San Francisco, CA", False),
        ("Tokyo, Japan", "San Francisco, CA", True),
        ("6:45pm", "07:30", False),
        ("18:45", "07:30", True),
        ("42", "msg-0042", False),
        ("msg-0099", "msg-0042", True),
        ("/home/ann/docs", "/var/log", True),  # examples illustrate: a longer path fits
        ("Ann", "Maria Lopez", True),
        ("May 3", "0000-00-00", False),
    ],
)
def test_a_value_fits_the_form_its_example_shows(value: str, example: str, fit: bool) -> None:
    assert fits(value, example) is fit


def test_forms_come_from_examples_and_written_formats_never_from_enums() -> None:
    def book(date: str, room: str) -> str:
        """Book a room.

        Args:
            date: the day, as YYYY-MM-DD.
            room: which room.
        """
        return "booked"

    assert shown_forms(Tool.from_function(book)) == {"date": ("0000-00-00",)}
    assert shown_forms(BOX.get("set_alarm")) == {"time": ("07:30", "00:00")}
    assert misformed(BOX.get("weather"), {"location": "Tokyo"}) == [
        ("location", "San Francisco, CA")
    ]


def _program(arguments: list[dict[str, Any]]) -> tuple[FreyrProgram, FunctionLM]:
    written = iter(arguments)

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["set_alarm"]}
        if call.role == "parameters":
            return {"arguments": next(written)}
        return {"reply": "Alarm set for 18:45."}

    engine = FunctionLM(answer)
    program = FreyrProgram(toolbox=BOX, strategy=make_strategy("freyr"))
    program.set_lm(dspy.LM("fake/forms", engine=engine, cache=False))
    return program, engine


def test_a_value_in_another_form_is_refused_once_and_written_again() -> None:
    program, engine = _program([{"time": "6:45pm"}, {"time": "18:45"}])
    result = program(message="Wake me at quarter to seven in the evening").result
    [call] = result.calls
    assert call.arguments == {"time": "18:45"} and call.outcome.ok and call.attempts == 2
    feedback = [c for c in engine.calls if c.role == "parameters"][1].inputs["feedback"]
    assert "time is written like '07:30'" in feedback


def test_the_same_value_written_twice_stands() -> None:
    program, _ = _program([{"time": "6:45pm"}, {"time": "6:45pm"}])
    [call] = program(message="Wake me at 6:45pm").result.calls
    assert call.arguments == {"time": "6:45pm"} and call.outcome.ok


@pytest.mark.parametrize(
    ("description", "examples"),
    [
        ("City and country e.g. Bogotá, Colombia", ["Bogotá, Colombia"]),
        ("The city, e.g. Paris or London.", ["Paris", "London"]),
        ("a colour, e.g. red, green, blue", ["red", "green", "blue"]),
        ("24-hour time, e.g. 07:30. Local time.", ["07:30"]),
        ("a folder (e.g. /var/log)", ["/var/log"]),
        ("the title of the task", []),
    ],
)
def test_unquoted_examples_are_read_up_to_the_end_of_their_sentence(
    description: str, examples: list[str]
) -> None:
    assert unquoted_examples(description) == examples
