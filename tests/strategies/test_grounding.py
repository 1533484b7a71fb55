"""Grounded optional arguments: invented optional values are dropped, stated ones kept."""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.strategies._grounding import Evidence, differs_by_stated_values, ground_arguments
from freyr_dspy.testing import ScriptedLM, register_fake, unregister_fake
from freyr_dspy.tools import Tool

PAYMENT = Tool.from_json_schema(
    "send_payment",
    "Send money to a person.",
    {
        "type": "object",
        "properties": {
            "recipient": {"type": "string"},
            "amount": {"type": "number"},
            "currency": {"type": "string", "default": "EUR"},
            "note": {"type": "string"},
            "instant": {"type": "boolean"},
            "split_with": {"type": "array", "items": {"type": "string"}},
            "reminder": {
                "type": "object",
                "properties": {"days_before": {"type": "integer"}, "method": {"type": "string"}},
            },
        },
        "required": ["recipient", "amount"],
    },
)


def grounded(message: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    return ground_arguments(PAYMENT, arguments, Evidence.of(message))


def test_invented_optional_values_are_dropped_and_required_ones_never() -> None:
    kept, dropped = grounded(
        "Send 40 to Jonas Berg.",
        {"recipient": "Someone Else", "amount": 41, "note": "for the concert", "currency": "GBP"},
    )
    assert kept == {"recipient": "Someone Else", "amount": 41}
    assert dropped == ["note", "currency"]


@pytest.mark.parametrize(
    ("message", "name", "value"),
    [
        ("Send 40 to Jonas with the note 'concert tickets'.", "note", "Concert tickets."),
        ("Pay Aisha 1200 GBP.", "currency", "gbp"),
        ("Split it with Ana and Bo.", "split_with", ["Ana", "bo"]),
        ("Remind me two days before by email.", "reminder", {"days_before": 2, "method": "email"}),
        ("The note says dining out.", "note", "dining_out"),
        ("The note is 1,200.50.", "note", "1200.5"),
        ("Pay Bo.", "instant", True),
        ("Split it on Monday and Friday.", "split_with", ["mon", "FRI"]),
        ("Pay Bo.", "note", ""),
        ("Pay Bo.", "currency", "EUR"),  # the declared default changes nothing
    ],
)
def test_stated_values_flags_empties_and_defaults_are_kept(
    message: str, name: str, value: Any
) -> None:
    kept, dropped = grounded(message, {"recipient": "Bo", "amount": 1, name: value})
    assert kept[name] == value and dropped == []


@pytest.mark.parametrize(
    ("message", "name", "value"),
    [
        ("Remind me 2 days before.", "reminder", {"days_before": 2, "method": "sms"}),
        ("Split it with Ana.", "split_with", ["Ana", "Bo"]),
        ("Send 40 to Jonas, it is for the concert.", "note", "concert tickets"),
        ("Send 5 to Jonas.", "note", "50"),  # a number must be stated whole, not as a digit
        ("Split it on Monday.", "split_with", ["mo"]),  # too short to be an abbreviation
        ("Split it with Simone.", "split_with", ["mone"]),  # only a word's start abbreviates it
    ],
)
def test_a_value_only_partly_stated_is_dropped(message: str, name: str, value: Any) -> None:
    kept, dropped = grounded(message, {"recipient": "Bo", "amount": 1, name: value})
    assert name not in kept and dropped == [name]


@pytest.mark.parametrize("value", ["None", "null", "N/A", " none "])
def test_a_text_for_no_value_is_dropped_even_where_the_evidence_says_none(value: str) -> None:
    # "(none)" is how an empty conversation is shown to the roles
    kept, dropped = ground_arguments(
        PAYMENT, {"recipient": "Bo", "amount": 1, "note": value}, Evidence.of("Pay Bo 1.", "(none)")
    )
    assert "note" not in kept and dropped == ["note"]


def test_a_text_for_no_value_is_kept_where_the_enum_offers_it() -> None:
    tool = Tool.from_json_schema(
        "set_alert",
        "Set an alert.",
        {
            "type": "object",
            "properties": {"level": {"type": "string", "enum": ["none", "low", "high"]}},
        },
    )
    kept, dropped = ground_arguments(tool, {"level": "none"}, Evidence.of("Alerts: none."))
    assert kept == {"level": "none"} and dropped == []


def test_unknown_argument_names_are_left_to_validation() -> None:
    kept, dropped = grounded("Pay Bo 3.", {"recipient": "Bo", "amount": 3, "memo": "invented"})
    assert kept["memo"] == "invented" and dropped == []


def _program(parameters: dict[str, Any], **kwargs: Any) -> tuple[FreyrProgram, str]:
    engine = ScriptedLM(
        {
            "intent": {"*": {"intents": ["add_task"]}},
            "parameters": {"*": {"arguments": parameters}},
            "summary": {"*": {"reply": "Done."}},
        }
    )
    name = f"grounding_{id(engine)}"
    register_fake(name, engine)
    program = FreyrProgram("todo", **kwargs)
    program.apply_assignment(dict.fromkeys(program.role_names, RoleModel(model=f"fake/{name}")))
    return program, name


@pytest.mark.parametrize("ground", [True, False])
def test_the_program_drops_an_invented_priority_and_records_it(ground: bool) -> None:
    program, name = _program({"title": "buy milk", "priority": 4}, ground_arguments=ground)
    try:
        result = program(message="Add buy milk to my list").result
    finally:
        unregister_fake(name)
    [call] = result.calls
    assert call.outcome.ok
    if ground:
        assert (call.arguments, call.dropped) == ({"title": "buy milk"}, ["priority"])
        assert result.state.tasks[0].priority == 1  # the tool's own default
    else:
        assert (call.arguments, call.dropped) == ({"title": "buy milk", "priority": 4}, [])
        assert result.state.tasks[0].priority == 4


def test_earlier_outcomes_and_the_state_count_as_evidence() -> None:
    evidence = Evidence.of("Reply to it.", "", "inbox: msg-0042 from Ana", "- search(): found 3")
    assert evidence.states("msg-0042") and evidence.states(3) and not evidence.states(4)


def test_unstated_required_names_text_values_that_share_no_word_with_the_request() -> None:
    from freyr_dspy.strategies._grounding import unstated_required

    def slot(participants: list[str], date: str, zone: str, minutes: int) -> str:
        """Find a free slot."""
        return "ok"

    tool = Tool.from_function(slot)
    evidence = Evidence.of("Meet Ana on 2 May 2026, Chicago time, for 30 minutes")
    stated = {"participants": ["ana@example.com"], "date": "2026-05-02", "zone": "America/Chicago"}
    assert unstated_required(tool, {**stated, "minutes": 45}, evidence) == []
    invented = {**stated, "participants": ["participant1@example.com"], "zone": "UTC"}
    assert unstated_required(tool, invented, evidence) == ["participants", "zone"]
    # a longer word may begin one of the request's: "India" for "Indian"
    assert unstated_required(tool, {"zone": "India"}, Evidence.of("an Indian passport")) == []


@pytest.mark.parametrize(
    ("call", "kept"),
    [
        ({"service": "auth", "replicas": 5}, True),  # 5 is stated
        ({"service": "auth", "replicas": 0}, False),  # 0 is not
        ({"service": "auth", "replicas": 3, "limit": 10}, False),  # the same call, plus 10
        ({"service": "auth", "replicas": 3, "graceful": True}, False),  # a flag is no difference
        ({"service": "auth"}, False),  # leaving a value out asks for nothing
        ({"service": "auth", "replicas": 5, "region": "mars"}, False),  # 5, but also mars
        ({"service": "auth", "replicas": 5, "date": "2026-05-04"}, True),  # dates are derived
    ],
)
def test_an_extra_call_must_differ_from_the_others_only_in_stated_values(
    call: dict[str, Any], kept: bool
) -> None:
    evidence = Evidence.of("scale auth to 3 replicas, and to 5 on Monday")
    first = {"service": "auth", "replicas": 3}
    assert differs_by_stated_values(call, [first], evidence) is kept
    assert not differs_by_stated_values(first, [first], evidence)


def test_the_same_values_swapped_are_no_new_call_unless_said_twice() -> None:
    asked = {"amount": 100, "source": "USD", "target": "EUR"}
    swapped = {"amount": 100, "source": "EUR", "target": "USD"}
    once = Evidence.of("Convert 100 USD to EUR, then add a todo with the converted amount")
    assert not differs_by_stated_values(swapped, [asked], once)
    there, back = {"from": "Oslo", "to": "Paris"}, {"from": "Paris", "to": "Oslo"}
    twice = Evidence.of("Trains from Oslo to Paris and from Paris to Oslo")
    assert differs_by_stated_values(back, [there], twice)


def test_a_request_in_another_language_keeps_its_optional_values() -> None:
    def search_hotels(city: str, guests: int = 1, amenities: list[str] | None = None) -> str:
        """Find hotels in a city."""
        return "hotels"

    tool = Tool.from_function(search_hotels)
    arguments = {"city": "Valencia", "guests": 3, "amenities": ["pool"]}
    spanish = Evidence.of("Busca hoteles en Valencia para tres personas con piscina, por favor.")
    assert not spanish.english and 3.0 in spanish.numbers  # "tres" is a number word
    assert ground_arguments(tool, arguments, spanish) == (arguments, [])
    english = Evidence.of("Find hotels in Valencia for 3 people, please.")
    assert english.english
    kept, dropped = ground_arguments(tool, arguments, english)
    assert dropped == ["amenities"] and kept == {"city": "Valencia", "guests": 3}


@pytest.mark.parametrize(
    ("said", "minutes"),
    [("for two hours", 120), ("an hour and a half", 90), ("half an hour", 30), ("2 hrs", 120)],
)
def test_a_duration_grounds_the_same_time_in_another_unit(said: str, minutes: int) -> None:
    evidence = Evidence.of(f"Add the dentist on Friday at 9 {said}")
    assert evidence.states(minutes)
    assert not evidence.states(minutes + 15)


def test_a_number_without_a_unit_of_time_grounds_no_conversion() -> None:
    assert not Evidence.of("Book a table for two").states(120)


@pytest.mark.parametrize(
    ("value", "stated"),
    [("SKU-501", True), ("BA2490", True), ("note-13", True), ("SKU-502", False), ("note-1", False)],
)
def test_an_id_is_stated_only_whole(value: str, stated: bool) -> None:
    """ "SKU-502" shares "sku" with a listing of SKU-501, and states nothing about 502."""
    from freyr_dspy.strategies._grounding import unstated_required

    def remove_item(sku: str) -> str:
        """Take a product out of the cart."""
        return sku

    evidence = Evidence.of("view_cart returned SKU-501 dog food; flight BA 2490; note-13 title")
    missing = unstated_required(Tool.from_function(remove_item), {"sku": value}, evidence)
    assert missing == ([] if stated else ["sku"])
