"""The retry schema that cannot repeat a blamed value, or takes a listed one
(``prompting.narrowing``), checked down to the llama.cpp grammar."""

from __future__ import annotations

import json
import re
from typing import Any

from freyr_dspy.backends import schema_grammar
from freyr_dspy.prompting._narrowing import choose_from, forbid_values, offered_choices
from freyr_dspy.roles import parameters_contract
from freyr_dspy.tools import Tool
from tests.support.gbnf import Grammar, parses_in_llama_cpp
from tests.support.room_tool import create_room


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
