"""Values copied from a tool description's example are refused once and asked for again."""

from __future__ import annotations

import json
from typing import Any

import dspy
import pytest

from freyr_dspy.domains import Domain
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.strategies._grounding import (
    Evidence,
    copied_examples,
    examples_of,
    tool_without_examples,
)
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake
from freyr_dspy.tools import Tool, Toolbox

EVENT = Tool.from_json_schema(
    "create_event",
    "Create a calendar event, for example 'Standup'.",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Event title, e.g. 'Weekly sync'"},
            "room": {"type": "string", "description": 'Room, such as "Aula" or "Lab 2".'},
            "version": {"type": "string", "description": "Tag, e.g. `v1.4.2`."},
            "attendees": {
                "type": "array",
                "items": {"type": "string", "examples": ["ana@example.com"]},
            },
            "code": {"type": "string", "description": "A code, e.g. XXOO (unquoted)."},
        },
        "required": ["title"],
    },
)


def test_examples_are_the_quoted_values_after_an_example_phrase_and_schema_examples() -> None:
    assert examples_of(EVENT) == {
        " standup ",
        " weekly sync ",
        " aula ",
        " lab 2 ",
        " v1 4 2 ",
        " ana example com ",
    }


def test_a_parameter_named_examples_is_a_parameter_not_the_keyword() -> None:
    tool = Tool.from_json_schema(
        "save_prompt",
        "Store a prompt.",
        {
            "type": "object",
            "properties": {
                "examples": {"type": "array", "items": {"type": "string", "examples": ["hi"]}},
                "title": {"type": "string", "description": "Its title, e.g. 'Greeting'"},
            },
        },
    )
    assert examples_of(tool) == {" hi ", " greeting "}
    cleaned = tool_without_examples(tool).schema
    assert set(cleaned["properties"]) == {"examples", "title"}
    assert cleaned["properties"]["examples"] == {"type": "array", "items": {"type": "string"}}
    assert cleaned["properties"]["title"]["description"] == "Its title"


def test_a_tool_without_examples_has_none() -> None:
    plain = Tool.from_json_schema("ping", "Check the service.", {"type": "object"})
    assert examples_of(plain) == frozenset()


def test_a_copy_is_an_example_value_nobody_stated_nested_values_included() -> None:
    arguments = {"title": "Weekly Sync", "room": "Kitchen", "attendees": ["ana@example.com"]}
    found = copied_examples(
        examples_of(EVENT), arguments, Evidence.of("Book the design review at 10")
    )
    assert found == [("title", "Weekly Sync"), ("attendees", "ana@example.com")]


def test_an_example_value_the_user_said_is_not_a_copy() -> None:
    stated = Evidence.of("Put the weekly sync in Lab 2")
    assert (
        copied_examples(examples_of(EVENT), {"title": "weekly sync", "room": "Lab 2"}, stated) == []
    )


# -- in a program: refused once, asked again, a repeated copy stands ---------------------------

SPEC = [
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "description": "Create a calendar event.",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "Event title, e.g. 'Weekly sync'"}
                },
                "required": ["title"],
            },
        },
    }
]


def _domain() -> Domain:
    toolbox = Toolbox.from_openai(SPEC)
    return Domain(
        "copy-test",
        "a calendar",
        make_toolbox=lambda: toolbox,
        renderers={"text": lambda state: state or "(no state)"},
    )


@pytest.fixture
def fake_name() -> Any:
    names: list[str] = []

    def register(engine: FunctionLM) -> str:
        name = f"copy_{id(engine)}"
        register_fake(name, engine)
        names.append(name)
        return f"fake/{name}"

    yield register
    for name in names:
        unregister_fake(name)


def _freyr(titles: list[str], fake_name: Any, **kwargs: Any) -> tuple[FreyrProgram, FunctionLM]:
    """A freyr program whose parameters role writes ``titles`` in order (the last repeats)."""

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": ["create_event"]}
        if call.role == "parameters":
            index = sum(1 for c in engine.calls if c.role == "parameters") - 1
            return {"arguments": {"title": titles[min(index, len(titles) - 1)]}}
        return {"reply": "Done."}

    engine = FunctionLM(answer)
    program = FreyrProgram(_domain(), **kwargs)
    model = RoleModel(model=fake_name(engine))
    program.apply_assignment(dict.fromkeys(program.role_names, model))
    return program, engine


def test_freyr_asks_again_for_a_copied_value_without_spending_a_retry(fake_name: Any) -> None:
    program, engine = _freyr(["Weekly sync", "Design review"], fake_name, max_retries=0)
    [call] = program(message="Book the design review").result.calls
    assert call.outcome.ok and call.arguments == {"title": "Design review"}
    assert call.attempts == 2 and "example in the description of create_event" in call.errors[0]
    second = [c for c in engine.calls if c.role == "parameters"][1]
    assert second.inputs["feedback"].startswith("Calling create_event failed: title: copied")
    assert "Weekly sync" not in second.prompt  # not in the spec, the schema or the feedback


def test_the_same_copy_written_again_stands(fake_name: Any) -> None:
    program, _ = _freyr(["Weekly sync"], fake_name, max_retries=0)
    [call] = program(message="Book the design review").result.calls
    assert call.outcome.ok and call.arguments == {"title": "Weekly sync"}
    assert call.attempts == 2


def test_with_grounding_off_a_copy_runs_at_once(fake_name: Any) -> None:
    program, _ = _freyr(["Weekly sync"], fake_name, ground_arguments=False)
    [call] = program(message="Book the design review").result.calls
    assert call.outcome.ok and call.attempts == 1 and call.errors == []


def test_prompted_gets_the_refusal_as_an_observation() -> None:
    def request(title: str) -> dict[str, str]:
        return {"response": json.dumps({"tool": "create_event", "parameters": {"title": title}})}

    turns = [request("Weekly sync"), request("Design review"), {"response": "Booked."}]

    def answer(call: FakeCall) -> Any:
        return turns[min(len(engine.calls) - 1, len(turns) - 1)]

    engine = FunctionLM(answer)
    program = FreyrProgram(_domain(), strategy="prompted")
    program.set_lm(dspy.LM("fake/prompted-copy", engine=engine, cache=False))
    result = program(message="Book the design review").result
    [call] = result.calls
    assert call.outcome.ok and call.arguments == {"title": "Design review"}
    assert "example in the description" in engine.calls[1].inputs["observations"]


def test_without_examples_removes_the_example_clauses_only() -> None:
    from freyr_dspy.strategies._grounding import without_examples

    assert without_examples("Event title, e.g. 'Weekly sync'") == "Event title"
    assert without_examples('Room, such as "Aula" or "Lab 2".') == "Room."
    assert without_examples("Tag (e.g. `v1.4.2`).") == "Tag."
    assert without_examples("A code, e.g. XXOO.") == "A code, e.g. XXOO."  # unquoted: kept


def test_after_a_copy_the_parameters_role_sees_no_examples(fake_name: Any) -> None:
    program, engine = _freyr(["Weekly sync", "Design review"], fake_name)
    program(message="Book the design review")
    first, second = [c for c in engine.calls if c.role == "parameters"]
    assert "e.g. 'Weekly sync'" in first.inputs["tool"]
    assert "Weekly sync" not in second.inputs["tool"] and "Event title" in second.inputs["tool"]
    assert "e.g." not in second.prompt.split("<tool>")[0]  # the schema shown has none either


# -- the refusal written back as the value -----------------------------------------------------

REFUSAL_ECHO = (
    "Copied from the example in the description of create_event, not a value the user gave"
)


def test_an_error_written_back_as_a_value_is_an_echo_a_listed_value_is_not() -> None:
    from freyr_dspy.strategies._grounding import echoed_error

    error = f"title: {REFUSAL_ECHO.lower()}; write the value the request gives"
    request = Evidence.of("Book the design review")
    assert echoed_error({"title": REFUSAL_ECHO, "room": "Lab"}, error, request) == ["title"]
    assert echoed_error({"attendees": [REFUSAL_ECHO]}, error, request) == ["attendees"]
    listed = "room 'Atrium' does not exist; the rooms are: Gravity Room, Omega Room, Room 1"
    assert echoed_error({"room": "Omega Room"}, listed, request) == []
    # A long value the user did say stays, even when the error repeats it.
    said = Evidence.of("Title it 'the example in the description' please")
    assert echoed_error({"title": "the example in the description"}, error, said) == []


def test_a_call_whose_retry_echoes_the_refusal_is_not_made(fake_name: Any) -> None:
    program, engine = _freyr(["Weekly sync", REFUSAL_ECHO], fake_name)
    [call] = program(message="Book the design review").result.calls
    assert not call.outcome.ok and call.gave_up and call.never_made
    assert "repeats the last error" in call.outcome.message
    assert sum(1 for c in engine.calls if c.role == "parameters") == 2  # no retry after the echo
