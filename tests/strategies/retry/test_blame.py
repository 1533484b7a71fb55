"""Blamed values: which arguments an error blames (``strategies.retry.blame``), and the retry
schema that cannot repeat them (``prompting.narrowing``), checked down to the llama.cpp grammar."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from freyr_dspy.backends.llamacpp_grammar import schema_grammar
from freyr_dspy.prompting.narrowing import choose_from, forbid_values, offered_choices
from freyr_dspy.roles.parameters import parameters_contract
from freyr_dspy.strategies.retry.blame import (
    RetryLimits,
    blame_note,
    blamed_arguments,
    listed_choices,
)
from freyr_dspy.tools import Tool
from tests.support.gbnf import Grammar, parses_in_llama_cpp


def create_room(name: str, room_from: str, direction: Literal["north", "south", "east"]) -> str:
    """Add a room next to an existing one.

    Args:
        name: the new room's name.
        room_from: the existing room it connects to.
        direction: side of room_from where the new room goes.
    """
    return name


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


def test_an_empty_text_must_be_written_and_a_blamed_enum_member_leaves_the_enum() -> None:
    schema = Tool.from_function(create_room).json_schema()
    narrowed = forbid_values(schema, {"room_from": [""], "direction": ["north"]})
    assert narrowed["properties"]["room_from"]["minLength"] == 1
    assert narrowed["properties"]["direction"]["enum"] == ["south", "east"]
    assert narrowed["properties"]["name"] == schema["properties"]["name"]
    assert "minLength" not in schema["properties"]["room_from"]  # the input is not changed


def test_a_blamed_text_is_excluded_by_a_pattern_and_only_that_text() -> None:
    schema = Tool.from_function(create_room).json_schema()
    narrowed = forbid_values(schema, {"room_from": ["Hall", "Hall-Cellar", ""]})
    pattern = narrowed["properties"]["room_from"]["pattern"]
    for excluded in ("Hall", "Hall-Cellar", ""):
        assert re.fullmatch(pattern, excluded) is None
    for allowed in ("Hal", "Hall-", "Hall-Cellar 2", "Cellar", "hall", "Ωmega"):
        assert re.fullmatch(pattern, allowed)


def test_what_a_pattern_cannot_exclude_is_left_alone() -> None:
    schema = Tool.from_function(create_room).json_schema()
    # a text with a quote, an unknown parameter, and an enum that would be left empty
    forbidden = {"name": ['say "hi"'], "nope": [""], "direction": ["north", "south", "east"]}
    assert forbid_values(schema, forbidden) == schema
    assert forbid_values({"type": "string"}, {"x": [""]}) == {"type": "string"}
    number = {"type": "object", "properties": {"hp": {"type": "integer"}}}
    assert forbid_values(number, {"hp": [5]}) == number
    own_pattern = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}}
    assert forbid_values(own_pattern, {"id": ["ab"]}) == own_pattern
    assert forbid_values(own_pattern, {"id": [""]})["properties"]["id"]["minLength"] == 1
    # a text the pattern cannot hold does not stop the others from being excluded
    mixed = forbid_values(schema, {"name": ['say "hi"', "Hall"]})["properties"]["name"]
    assert re.fullmatch(mixed["pattern"], "Hall") is None and re.fullmatch(mixed["pattern"], "x")


def test_an_optional_text_loses_the_empty_string_in_its_text_branch_only() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"memo": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    }
    narrowed = forbid_values(schema, {"memo": [""]})
    assert narrowed["properties"]["memo"]["anyOf"] == [
        {"type": "string", "minLength": 1},
        {"type": "null"},
    ]


def test_the_retry_grammar_refuses_the_blamed_values_and_accepts_others() -> None:
    tool = Tool.from_function(create_room)
    forbidden = {"room_from": ["", "Hall-Cellar"], "direction": ["north"], "name": ["Hall"]}
    contract = parameters_contract(tool, may_give_up=True, forbidden=forbidden)
    grammar = schema_grammar(json.dumps(contract["arguments"]))
    assert grammar is not None and parses_in_llama_cpp(grammar)
    accepts = Grammar(grammar).accepts
    assert accepts('{"name": "Hall 2", "room_from": "Cellar", "direction": "east"}')
    assert not accepts('{"name": "Hall 2", "room_from": "", "direction": "east"}')
    assert not accepts('{"name": "Hall 2", "room_from": "Hall-Cellar", "direction": "east"}')
    assert not accepts('{"name": "Hall 2", "room_from": "Cellar", "direction": "north"}')
    assert not accepts('{"name": "Hall", "room_from": "Cellar", "direction": "east"}')
    assert accepts('{"give_up": "no free side"}')  # the opt-out is still offered


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


def test_a_refused_value_is_never_offered_and_an_enum_offers_its_members_only() -> None:
    text = {"type": "string"}
    assert offered_choices(text, ["Attic", "Hall", "Hall"], refused=["Attic"]) == ["Hall"]
    assert offered_choices(text, ["Attic"], refused=["Attic"]) == []
    assert offered_choices({"enum": ["a", "b"]}, ["b", "c"], refused=[]) == ["b"]
    assert offered_choices({"enum": ["a"]}, ["c"], refused=[]) == []
    assert offered_choices({"type": "integer"}, ["1"], refused=[]) == []
    nullable = {"anyOf": [{"type": "null"}, {"type": "string"}]}
    assert offered_choices(nullable, ["a"], refused=[]) == ["a"]
    assert offered_choices(None, ["a"], refused=[]) == []  # a parameter the tool lacks


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


def test_the_listed_values_become_the_enum_of_a_text_and_narrow_an_enum() -> None:
    schema = Tool.from_function(create_room).json_schema()
    offered = choose_from(schema, {"room_from": ["Hall", "Cellar"], "direction": ["east", "up"]})
    room_from = offered["properties"]["room_from"]
    assert room_from["enum"] == ["Hall", "Cellar"] and room_from["type"] == "string"
    assert offered["properties"]["direction"]["enum"] == ["east"]
    assert offered["properties"]["name"] == schema["properties"]["name"]
    assert "enum" not in schema["properties"]["room_from"]  # the input is not changed
    # nothing left of an enum, or a property that is not text: left alone
    assert choose_from(schema, {"direction": ["up"]}) == schema
    number = {"type": "object", "properties": {"hp": {"type": "integer"}}}
    assert choose_from(number, {"hp": ["5"]}) == number
    nullable = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    optional = {"type": "object", "properties": {"memo": nullable}}
    assert choose_from(optional, {"memo": ["a"]})["properties"]["memo"]["anyOf"] == [
        {"type": "string", "enum": ["a"]},
        {"type": "null"},
    ]


def test_the_retry_grammar_takes_only_a_listed_value_not_yet_blamed() -> None:
    tool = Tool.from_function(create_room)
    contract = parameters_contract(
        tool,
        may_give_up=True,
        forbidden={"room_from": ["Hall"]},
        choices={"room_from": ["Hall", "Cellar", "Room 3.0"]},
    )
    grammar = schema_grammar(json.dumps(contract["arguments"]))
    assert grammar is not None and parses_in_llama_cpp(grammar)
    accepts = Grammar(grammar).accepts
    for room in ("Cellar", "Room 3.0"):
        assert accepts(f'{{"name": "Attic", "room_from": "{room}", "direction": "east"}}')
    for room in ("Hall", "Cellar (2)", "Room 3", "Attic"):
        assert not accepts(f'{{"name": "Attic", "room_from": "{room}", "direction": "east"}}')
    assert accepts('{"give_up": "no such room"}')
