"""A value the request says comes from an earlier call's result: read from the request, and
the call refused once when it leaves that result out (``strategies._references``)."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._references import misses_result, refers_back
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox

ASK = "Convert 100 USD to EUR, then add a todo titled 'pay' followed by the converted amount"


def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency to another."""
    return f"{amount} {source} = 92.50 {target}"


def add_todo(title: str) -> str:
    """Add a todo item."""
    return f"Added todo: {title}"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: 22 C, sunny"


CONVERT, TODO, WEATHER = (Tool.from_function(f) for f in (convert_currency, add_todo, get_weather))


@pytest.mark.parametrize(
    ("message", "tool", "expected"),
    [
        (ASK, CONVERT, True),
        ("Get the weather in Paris and add a todo with the weather", WEATHER, True),
        ("Convert 5 USD to EUR and save the result as a note", CONVERT, True),
        ("Convierte 100 USD a EUR y crea una tarea con el resultado", CONVERT, True),
        ("Rechne 100 USD in EUR um und erstelle eine Aufgabe mit dem Betrag", CONVERT, True),
        ("Convertis 100 USD en EUR puis ajoute une tâche avec le montant", CONVERT, True),
        # no pointing back: two asks that stand alone
        ("What's the weather in Tokyo, and book me a table for two at 8pm?", WEATHER, False),
        ("Check the weather in Oslo and add a todo 'umbrella'", WEATHER, False),
        # the ask's own words in the first clause point at nothing earlier
        ("Convert the amount of 100 USD to EUR", CONVERT, False),
        ("Convert 100 USD to EUR", CONVERT, False),
    ],
)
def test_refers_back_reads_a_pointer_after_the_first_clause(
    message: str, tool: Tool, expected: bool
) -> None:
    assert refers_back(message, tool) is expected


def test_misses_result_looks_for_what_the_result_adds_to_the_request() -> None:
    result = "100.0 USD = 92.50 EUR"
    assert misses_result({"title": "pay"}, result, ASK)
    # the request's own values are not the result's
    assert misses_result({"title": "pay 100 USD"}, result, ASK)
    assert not misses_result({"title": "pay 92.5 EUR"}, result, ASK)
    assert not misses_result({"amount": 92.5}, result, ASK)
    # a result that adds nothing to the request cannot be missed
    assert not misses_result({"title": "pay"}, "100 USD EUR", ASK)


def program(**settings: Any) -> tuple[FreyrProgram, FunctionLM]:
    """Plans the conversion then the todo; the todo's title takes the amount only when told."""

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["convert_currency", "add_todo"]}
        if call.role == "confirm":
            return {"asked": {"convert_currency": True, "add_todo": True}}
        if call.role == "parameters" and "convert_currency" in call.inputs["tool"]:
            return {"arguments": {"amount": 100, "source": "USD", "target": "EUR"}}
        if call.role == "parameters":
            told = "convert_currency returned" in call.inputs.get("feedback", "")
            return {"arguments": {"title": "pay 92.50 EUR" if told else "pay"}}
        return {"reply": "Done."}

    engine = FunctionLM(answer)
    toolbox = Toolbox([CONVERT, TODO, WEATHER])
    prog = FreyrProgram(toolbox=toolbox, strategy=make_strategy("freyr", **settings))
    prog.set_lm(dspy.LM("fake/references", engine=engine, cache=False))
    return prog, engine


def test_a_call_that_leaves_out_the_result_it_points_at_is_written_again() -> None:
    prog, engine = program()
    result = prog(message=ASK).result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("convert_currency", {"amount": 100, "source": "USD", "target": "EUR"}),
        ("add_todo", {"title": "pay 92.50 EUR"}),
    ]
    # refused once, at no retry's cost: the todo was written twice
    assert engine.roles_called().count("parameters") == 3
    assert result.calls[1].errors and "convert_currency returned" in result.calls[1].errors[0]


def test_a_request_that_points_at_no_result_is_not_refused() -> None:
    prog, engine = program()
    result = prog(message="Convert 100 USD to EUR and add a todo titled 'pay'").result
    assert [c.arguments for c in result.calls][1] == {"title": "pay"}
    assert engine.roles_called().count("parameters") == 2


def test_written_the_same_way_again_the_call_stands() -> None:
    def stubborn(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["convert_currency", "add_todo"]}
        if call.role == "parameters" and "convert_currency" in call.inputs["tool"]:
            return {"arguments": {"amount": 100, "source": "USD", "target": "EUR"}}
        if call.role == "parameters":
            return {"arguments": {"title": "pay"}}
        return {"reply": "Done."}

    engine = FunctionLM(stubborn)
    prog = FreyrProgram(
        toolbox=Toolbox([CONVERT, TODO]), strategy=make_strategy("freyr", confirm=False)
    )
    prog.set_lm(dspy.LM("fake/references", engine=engine, cache=False))
    result = prog(message=ASK).result
    assert result.calls[1].outcome.ok and result.calls[1].arguments == {"title": "pay"}
    assert engine.roles_called().count("parameters") == 3


def list_notes(tag: str = "") -> str:
    """The notes, with their ids."""
    return '[{"id": "note-11", "title": "Flat viewing"}, {"id": "note-13", "title": "Mortgage"}]'


def read_note(note_id: str) -> str:
    """One note's text."""
    if note_id != "note-13":
        raise ValueError(f"no note {note_id}")
    return "Mortgage: call the bank"


def test_a_value_that_is_the_text_of_a_call_is_refused_once() -> None:
    copied = "list_notes(tag='househunt') returned"

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["read_note"]}
        if call.role == "confirm":
            return {"asked": {"read_note": True}}
        if call.role == "parameters":
            told = "the text of a call" in call.inputs.get("feedback", "")
            return {"arguments": {"note_id": "note-13" if told else copied}}
        return {"reply": "It says: call the bank."}

    engine = FunctionLM(answer)
    toolbox = Toolbox([Tool.from_function(list_notes, read_only=True),
                       Tool.from_function(read_note, read_only=True)])  # fmt: skip
    prog = FreyrProgram(toolbox=toolbox, strategy=make_strategy("freyr", abstain=True))
    prog.set_lm(dspy.LM("fake/references", engine=engine, cache=False))
    earlier = [
        {"role": "user", "content": "Pull up everything I tagged househunt"},
        {"role": "tool", "content": f"{copied} {list_notes()}"},
    ]
    result = prog(message="Read me the last one", conversation=earlier).result
    [call] = result.calls
    assert call.arguments == {"note_id": "note-13"} and call.outcome.ok
    # the refusal cost no retry: one refused attempt, then the right one
    assert len(call.errors) == 1 and "text of a call" in call.errors[0]
