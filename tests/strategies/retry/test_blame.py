"""Which arguments an error blames, and which values it lists (``strategies.retry.blame``);
the retry's narrowed schema is tested in ``tests/prompting/test_narrowing.py``."""

from __future__ import annotations

import pytest

from freyr_dspy.strategies.retry._blame import (
    RetryLimits,
    blame_note,
    blamed_arguments,
    listed_choices,
    listed_correction,
)
from freyr_dspy.tools import Tool
from tests.support.room_tool import create_room


def test_a_parameter_named_as_a_word_is_blamed_whatever_its_value() -> None:
    arguments = {"name": "Hall", "room_from": "", "direction": "east"}
    error = "Domain validation error: room_from should be provided (it is empty)."
    assert blamed_arguments(arguments, error) == {"room_from": ""}


def test_a_name_inside_a_longer_word_is_not_blamed() -> None:
    arguments = {"room": "Hall", "from": "Cellar"}
    assert blamed_arguments(arguments, "room_from should be provided; fromage") == {}


def test_a_quoted_value_is_blamed_but_an_unquoted_one_is_not() -> None:
    arguments = {"enemy": "Gobbo", "room": "Swamp Room", "hp": 5}
    error = "there is no enemy named 'Gobbo' in Swamp Room; 5 enemies there"
    assert blamed_arguments(arguments, error) == {"enemy": "Gobbo"}
    assert blamed_arguments(arguments, "“Swamp Room” is a room") == {"room": "Swamp Room"}


def test_a_named_parameter_is_blamed_and_a_value_quoted_beside_it_is_not() -> None:
    arguments = {"room_name": "Hall-Cellar", "cell_index": 0}
    error = "cell_index must be between 1 and 2 for corridor 'Hall-Cellar'; got 0."
    assert blamed_arguments(arguments, error) == {"cell_index": 0}
    assert blamed_arguments(arguments, "no corridor 'Hall-Cellar'") == {"room_name": "Hall-Cellar"}


def test_a_parameter_named_in_the_plural_is_blamed() -> None:
    arguments = {"room_from": "Hall", "direction": "south"}
    error = "there already exists a room south of Hall (Attic); free directions of Hall 2: north."
    assert blamed_arguments(arguments, error) == {"direction": "south"}
    assert listed_choices(error, "direction") == ["north"]  # a label with a number in it


def test_an_empty_value_is_never_blamed_by_quotes() -> None:
    assert blamed_arguments({"title": ""}, "a name '' is not allowed") == {}


def test_the_note_names_the_blamed_parameters_without_their_values() -> None:
    note = blame_note({"enemy": "Gobbo", "room_from": ""})
    assert "enemy, room_from" in note and "Gobbo" not in note
    assert blame_note({}) == ""


def test_the_note_offers_the_values_a_blamed_parameter_is_given() -> None:
    note = blame_note({"room_from": "Hal"}, {"room_from": ["Hall", "Cellar"], "other": ["x"]})
    assert note.endswith("room_from is one of: Hall, Cellar.") and "other" not in note


ROOM_ERROR = (
    "add_corridor failed: Domain validation error: room_to_name 'Hall-Cellar' is not a room "
    "of the level (that is a corridor); rooms: Hall, Cellar, Room 3.0."
)


def test_a_list_whose_label_names_the_parameters_kind_is_its_choices() -> None:
    assert listed_choices(ROOM_ERROR, "room_to_name") == ["Hall", "Cellar", "Room 3.0"]
    assert listed_choices(ROOM_ERROR, "roomFrom") == ["Hall", "Cellar", "Room 3.0"]
    assert listed_choices(ROOM_ERROR, "target_room") == ["Hall", "Cellar", "Room 3.0"]
    assert listed_choices("valid units: 'celsius', 'kelvin'", "unit") == ["celsius", "kelvin"]
    assert listed_choices("no enemy 'Bo' here; enemies there: Gobbo, Bats", "enemy") == [
        "Gobbo",
        "Bats",
    ]
    for noun, plural in (("status", "statuses"), ("house", "houses"), ("movie", "movies")):
        assert listed_choices(f"{plural}: a, b", noun) == ["a", "b"], noun


def test_lists_are_read_in_the_forms_errors_write_them() -> None:
    assert listed_choices("rooms: ['Hall', 'Cellar']", "room") == ["Hall", "Cellar"]
    assert listed_choices("no such room (rooms: Hall, Cellar)", "room") == ["Hall", "Cellar"]
    assert listed_choices("rooms: Hall or Cellar", "room") == ["Hall", "Cellar"]
    argparse = "argument room: invalid choice: 'x' (choose from 'Hall', 'Cellar')"
    assert listed_choices(argparse, "room") == ["x", "Hall", "Cellar"]  # 'x', blamed, is refused


def test_a_list_of_another_kind_an_explanation_or_an_empty_list_offers_nothing() -> None:
    corridors = "no corridor between 'Hall' and 'Cellar'; corridors: Hall-Attic, Attic-Cellar."
    assert listed_choices(corridors, "room_from_name") == []
    assert listed_choices(ROOM_ERROR, "name") == []  # only words every parameter has
    assert listed_choices(ROOM_ERROR, "corridor_length") == []
    assert listed_choices("target enemies: Gobbo", "target_room") == []  # its kind is room
    assert listed_choices("there is no enemy named 'Bo'; enemies there: none.", "enemy") == []
    assert listed_choices("invalid date: must be YYYY-MM-DD", "date") == []
    assert listed_choices("Room: value is not a valid room", "room") == []
    # a tool's snake_case name before "failed:" is no label: its words are not a list's kind
    failed = "update_enemy_stats failed: there is no enemy named 'Bo' in Hall"
    assert listed_choices(failed, "enemy_name") == []


def test_the_noun_an_error_puts_before_the_value_is_a_kind_too() -> None:
    error = "there is no enemy named 'Bo' in Hall; enemies there: Gobbo, Bats."
    assert listed_choices(error, "reference_name", "Bo") == ["Gobbo", "Bats"]
    assert listed_choices(error, "reference_name") == []  # no kind of its own, nothing quoted
    assert listed_choices(error, "reference_name", "Hall") == []  # not quoted: no noun


def test_of_several_lists_for_a_kind_the_last_is_taken() -> None:
    error = "rooms before: Hall. Room 'Attic' is not a room; rooms now: Hall, Cellar"
    assert listed_choices(error, "room") == ["Hall", "Cellar"]


def test_retry_limits_keep_a_list_until_another_replaces_it_less_each_blamed_value() -> None:
    properties = Tool.from_function(create_room).json_schema()["properties"]
    limits = RetryLimits(exclude_blamed=True, choose_listed=True)
    limits.record(ROOM_ERROR, {"room_from": "Hall-Cellar"}, properties)
    assert limits.choices == {"room_from": ["Hall", "Cellar", "Room 3.0"]}
    limits.record("the door of 'Hall' is locked", {"room_from": "Hall"}, properties)
    assert limits.choices == {"room_from": ["Cellar", "Room 3.0"]}  # the list is kept, less Hall
    assert limits.forbidden == {"room_from": ["Hall-Cellar", "Hall"]}
    limits.record("room_from 'X' is unknown; rooms: Hall, Attic", {"room_from": "X"}, properties)
    assert limits.choices == {"room_from": ["Attic"]}  # a new list; Hall stays refused
    limits.record("room_from 'Attic' is unknown; rooms: Attic", {"room_from": "Attic"}, properties)
    assert limits.choices == {}  # nothing left to offer: the parameter is free again
    # "Unknown room: 'Attic'" reads as a list of the blamed value: it is not forced back
    alone = RetryLimits(choose_listed=True)
    alone.record("Unknown room_from: 'Attic'", {"room_from": "Attic"}, properties)
    assert alone.choices == {} and alone.forbidden == {}
    # an enum parameter is offered only listed members it has
    alone.record("direction 'up' is wrong; directions: east, down", {"direction": "up"}, properties)
    assert alone.choices == {"direction": ["east"]}


@pytest.mark.parametrize(
    ("written", "error", "corrected"),
    [
        ("patio door", "no door patio door; doors: front, patio", "patio"),
        ("Hal", "room 'Hal' is not a room; rooms: Hall, Cellar.", None),  # names no listed one
        ("running-plan", "no note running-plan; notes: note-3, note-5", None),
        ("big hall", "no room 'big hall'; rooms: Hall, Hall annex", "Hall"),
        ("hall", "no room 'hall'; rooms: Hall, Hall annex", None),  # both are halls
    ],
)
def test_a_blamed_value_that_names_one_listed_value_takes_it(
    written: str, error: str, corrected: str | None
) -> None:
    parameter = "door" if "door" in error else "room" if "room" in error else "note"
    fixed = listed_correction({parameter: written, "locked": True}, error)
    assert fixed == (None if corrected is None else {parameter: corrected, "locked": True})


def test_a_tool_that_lists_its_values_gets_the_one_meant_without_another_model_call() -> None:
    import dspy

    from freyr_dspy.program import FreyrProgram
    from freyr_dspy.strategies import make_strategy
    from freyr_dspy.testing import FakeCall, FunctionLM
    from freyr_dspy.tools import Tool, Toolbox

    def lock(door: str) -> str:
        """Lock a door."""
        if door not in ("front", "patio"):
            raise ValueError(f"no door {door}; doors: front, patio")
        return f"{door} door locked"

    def answer(call: FakeCall) -> dict[str, object]:
        if call.role == "intent":
            return {"intents": ["lock"]}
        if call.role == "parameters":
            return {"arguments": {"door": "patio door"}}  # as the user said it, every time
        return {"reply": "Locked."}

    engine = FunctionLM(answer)
    program = FreyrProgram(
        toolbox=Toolbox([Tool.from_function(lock)]), strategy=make_strategy("freyr")
    )
    program.set_lm(dspy.LM("fake/listed", engine=engine, cache=False))
    [call] = program(message="Lock the patio door").result.calls
    assert (call.arguments, call.outcome.ok, call.attempts) == ({"door": "patio"}, True, 2)
    assert engine.roles_called().count("parameters") == 1
