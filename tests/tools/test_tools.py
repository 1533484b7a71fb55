"""Tools and toolboxes: specs from code, validation with coercion, safe execution, catalogs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from freyr_dspy.domains._example import TodoState, make_todo_toolbox
from freyr_dspy.errors import ConfigError, ToolError
from freyr_dspy.schemas import Outcome
from freyr_dspy.tools import Tool, Toolbox, ToolParameter, normalize_name
from freyr_dspy.tools._toolbox import render_tool_spec


def book_flight(
    origin: str,
    destination: str,
    passengers: int = 1,
    cabin: Literal["economy", "business"] = "economy",
    max_price: float | None = None,
    tags: list[str] | None = None,
    note: Annotated[str, "free text for the agent"] = "",
) -> str:
    """Book a flight between two airports. Pays with the saved card.

    Args:
        origin: IATA code of the departure airport.
        destination: IATA code of the arrival
            airport: continued on a deeper line.
        passengers (int): how many seats.

    Returns:
        A confirmation sentence.
    """
    return f"booked {origin}->{destination} x{passengers} {cabin}"


def param(tool: Tool, name: str) -> ToolParameter:
    return next(p for p in tool.parameters if p.name == name)


# --------------------------------------------------------------------------- specs


def test_from_function_reads_name_description_and_args_docs() -> None:
    tool = Tool.from_function(book_flight, library="travel")
    assert tool.name == "book_flight"
    assert tool.library == "travel"
    assert tool.description == "Book a flight between two airports. Pays with the saved card."
    assert tool.summary == "Book a flight between two airports."
    assert [p.name for p in tool.parameters] == [
        "origin",
        "destination",
        "passengers",
        "cabin",
        "max_price",
        "tags",
        "note",
    ]
    assert param(tool, "origin").description == "IATA code of the departure airport."
    # a continuation line that contains a colon still belongs to the entry above it
    assert param(tool, "destination").description == (
        "IATA code of the arrival airport: continued on a deeper line."
    )
    assert param(tool, "passengers").description == "how many seats."
    assert param(tool, "note").description == "free text for the agent"


def test_from_function_types_required_defaults_enums() -> None:
    tool = Tool.from_function(book_flight)
    table = {p.name: (p.type, p.required, p.default, p.enum) for p in tool.parameters}
    assert table == {
        "origin": ("string", True, None, ()),
        "destination": ("string", True, None, ()),
        "passengers": ("integer", False, 1, ()),
        "cabin": ("string", False, "economy", ("economy", "business")),
        "max_price": ("number", False, None, ()),  # Optional[float] is shown as its inner type
        "tags": ("array", False, None, ()),
        "note": ("string", False, "", ()),
    }
    schema = tool.json_schema()
    assert schema["required"] == ["origin", "destination"]
    assert schema["properties"]["cabin"]["enum"] == ["economy", "business"]
    assert tool.openai_schema()["function"]["name"] == "book_flight"


def test_state_parameter_is_hidden_from_the_model() -> None:
    tool = make_todo_toolbox().get("add_task")
    assert tool.takes_state
    assert "state" not in {p.name for p in tool.parameters}


def test_untyped_parameter_is_a_config_error() -> None:
    def bad(x):  # type: ignore[no-untyped-def]
        """No types."""

    with pytest.raises(ConfigError, match="'x' needs a type hint"):
        Tool.from_function(bad)


class CreateEvent(BaseModel):
    """Create a calendar event. Invites nobody."""

    title: str = Field(description="what the event is")
    minutes: int = Field(30, description="duration in minutes")
    kind: Literal["meeting", "focus"] = "meeting"


def test_from_model_reads_fields_and_runs_with_validated_values() -> None:
    seen: dict[str, Any] = {}

    def create(title: str, minutes: int, kind: str) -> str:
        seen.update(title=title, minutes=minutes, kind=kind)
        return "created"

    tool = Tool.from_model(CreateEvent, create)
    assert tool.name == "create_event"
    assert tool.summary == "Create a calendar event."
    assert [(p.name, p.type, p.required, p.default) for p in tool.parameters] == [
        ("title", "string", True, None),
        ("minutes", "integer", False, 30),
        ("kind", "string", False, "meeting"),
    ]
    assert param(tool, "title").description == "what the event is"
    execution = Toolbox([tool]).execute("create_event", {"title": "standup", "minutes": "15"})
    assert execution.outcome == Outcome(ok=True, message="created")
    assert seen == {"title": "standup", "minutes": 15, "kind": "meeting"}


# --------------------------------------------------------------------------- validation


def test_coercion_of_model_written_values() -> None:
    tool = Tool.from_function(book_flight)
    args = tool.validate_arguments(
        {
            "origin": "LHR",
            "destination": 123,
            "passengers": "5",
            "cabin": "Business",
            "max_price": "99.5",
            "tags": ["a"],
        }
    )
    assert args["passengers"] == 5
    assert args["destination"] == "123"  # a number written for a text field
    assert args["cabin"] == "business"  # enum choices ignore case
    assert args["max_price"] == 99.5


def test_argument_names_tolerate_case_and_spacing() -> None:
    tool = Tool.from_function(book_flight)
    args = tool.validate_arguments({"Origin": "LHR", "DESTINATION": "JFK", "max price": 3})
    assert (args["origin"], args["destination"], args["max_price"]) == ("LHR", "JFK", 3.0)


def test_integer_enum_accepts_the_written_number() -> None:
    def pick(level: Literal[1, 2, 3]) -> str:
        """Pick a level."""
        return str(level)

    assert Tool.from_function(pick).validate_arguments({"level": "2"}) == {"level": 2}


def test_every_problem_is_reported_precisely() -> None:
    tool = Tool.from_function(book_flight)
    with pytest.raises(ToolError) as info:
        tool.validate_arguments({"origin": "LHR", "passengers": "many", "seat": "12A"})
    message = str(info.value)
    assert message.startswith("book_flight: ")
    assert "unexpected argument 'seat'" in message
    assert "missing required argument 'destination'" in message
    assert "argument 'passengers' expects integer" in message and "'many'" in message


def test_a_second_spelling_of_a_given_argument_is_reported() -> None:
    tool = Tool.from_function(book_flight)
    with pytest.raises(ToolError, match="unexpected argument 'Origin'"):
        tool.validate_arguments({"origin": "A", "Origin": "B", "destination": "C"})


def test_bad_enum_value_names_the_choices() -> None:
    box = make_todo_toolbox()
    outcome = box.execute("list_tasks", {"status": "pending"}, TodoState()).outcome
    assert not outcome.ok
    assert "'status'" in outcome.message and "'open'" in outcome.message


def test_spec_only_tool_validates_from_json_types_and_records_the_call() -> None:
    tool = Tool(
        "get_weather",
        "Weather for a city.",
        (
            ToolParameter("city", "string"),
            ToolParameter("days", "integer", required=False, default=1),
        ),
    )
    box = Toolbox([tool])
    execution = box.execute("get_weather", {"city": "Oslo", "days": "3"}, state={"x": 1})
    assert execution.outcome.ok
    assert execution.arguments == {"city": "Oslo", "days": 3}
    assert execution.state == {"x": 1}
    assert not box.execute("get_weather", {"days": "x"}).outcome.ok


# --------------------------------------------------------------------------- execution


def test_success_commits_a_copy_and_leaves_the_input_state_alone() -> None:
    box = make_todo_toolbox()
    before = TodoState()
    execution = box.execute("add_task", {"title": "milk", "priority": "2"}, before)
    assert execution.outcome.ok, execution.outcome.message
    assert before.tasks == []
    assert [(t.title, t.priority) for t in execution.state.tasks] == [("milk", 2)]


def test_tool_exception_becomes_an_error_outcome_and_loses_nothing() -> None:
    def explode(name: str, state: dict[str, list[str]]) -> str:
        """Append, then fail half-way."""
        state["items"].append(name)
        raise RuntimeError("disk full")

    state = {"items": ["a"]}
    execution = Toolbox([Tool.from_function(explode)]).execute("explode", {"name": "b"}, state)
    assert execution.outcome == Outcome(ok=False, message="explode failed: disk full")
    assert execution.state is state
    assert state == {"items": ["a"]}


def test_exception_without_message_names_its_type() -> None:
    def fail() -> None:
        """Fail."""
        raise KeyError

    outcome = Toolbox([Tool.from_function(fail)]).execute("fail", {}).outcome
    assert outcome.message == "fail failed: KeyError"


def test_validation_failure_does_not_call_the_tool() -> None:
    called = []

    def record(n: int) -> None:
        """Record."""
        called.append(n)

    outcome = Toolbox([Tool.from_function(record)]).execute("record", {"n": "x"}).outcome
    assert not outcome.ok and called == []


def test_model_text_is_never_evaluated() -> None:
    hits: list[Any] = []

    def echo(text: str, count: int = 1) -> str:
        """Echo."""
        hits.append((text, count))
        return text

    box = Toolbox([Tool.from_function(echo)])
    payload = "__import__('os').system('echo pwned')"
    assert box.execute("echo", {"text": payload}).outcome.message == payload
    assert not box.execute("echo", {"text": "x", "count": "1+1"}).outcome.ok
    assert not box.execute(payload, {}).outcome.ok
    assert hits == [(payload, 1)]


def test_return_values_become_outcomes() -> None:
    class Point(BaseModel):
        x: int

    def returns(kind: str) -> Any:
        """Return something of the given kind."""
        return {
            "none": None,
            "dict": {"a": 1},
            "model": Point(x=1),
            "outcome": Outcome(ok=False, message="refused"),
            "obj": object,
        }[kind]

    box = Toolbox([Tool.from_function(returns)])
    assert box.execute("returns", {"kind": "none"}).outcome == Outcome(ok=True, message="Done.")
    assert box.execute("returns", {"kind": "dict"}).outcome.data == {"a": 1}
    assert box.execute("returns", {"kind": "model"}).outcome.data == {"x": 1}
    assert box.execute("returns", {"kind": "outcome"}).outcome.ok is False
    assert box.execute("returns", {"kind": "obj"}).outcome.ok


def test_unknown_tool_lists_tools_and_suggests() -> None:
    outcome = make_todo_toolbox().execute("add_tsk", {}).outcome
    assert not outcome.ok
    assert "unknown tool 'add_tsk'" in outcome.message
    assert "Did you mean 'add_task'" in outcome.message


# --------------------------------------------------------------------------- toolbox


def test_catalog_levels() -> None:
    box = make_todo_toolbox()
    names = box.catalog("names").splitlines()
    assert names == [
        "- add_task",
        "- complete_task",
        "- remove_task",
        "- list_tasks",
        "- convert_minutes",
    ]
    brief = box.catalog("brief")
    assert "- add_task: Add a new task to the to-do list." in brief
    assert "priority" not in brief
    full = box.catalog("full")
    assert "    - priority (integer, optional, default 1): 1 (low) to 5 (urgent)." in full
    assert "one of all, open, done" in full
    extra = box.catalog("brief", extra={"conversation": "just talk"})
    assert extra.splitlines()[-1] == "- conversation: just talk"  # after the tools
    assert box.catalog("names", extra={"conversation": "x"}).splitlines()[-1] == "- conversation"


def test_render_tool_spec_without_parameters() -> None:
    def ping() -> str:
        """Check the service."""
        return "pong"

    assert render_tool_spec(Tool.from_function(ping)) == (
        "- ping: Check the service.\n    (no parameters)"
    )


def test_libraries_subset_and_library_catalog() -> None:
    box = make_todo_toolbox()
    assert box.libraries == {
        "tasks": ["add_task", "complete_task", "remove_task", "list_tasks"],
        "time": ["convert_minutes"],
    }
    assert box.library_catalog() == "- tasks: manage the to-do list\n- time: time arithmetic"
    assert box.subset(libraries=["time"]).names == ["convert_minutes"]
    # catalog order is kept, names are resolved tolerantly, unknown names are ignored
    assert box.subset(["REMOVE TASK", "add_task", "nope"]).names == ["add_task", "remove_task"]
    assert box.subset(["add_task"], ["time"]).names == ["add_task", "convert_minutes"]
    assert Toolbox([Tool.from_function(book_flight)]).libraries == {"general": ["book_flight"]}


def test_resolve_is_tolerant() -> None:
    box = make_todo_toolbox()
    for written in ("add_task", "Add Task", "`add-task`", "'ADD_TASK'", "**add_task**"):
        resolved = box.resolve(written)
        assert resolved is not None and resolved.name == "add_task", written
    assert box.resolve("add") is None
    assert "add task" in box and "nothing" not in box
    assert normalize_name(" Add-Task ") == "addtask"


def test_duplicate_tool_names_are_rejected() -> None:
    tool = Tool.from_function(book_flight)
    with pytest.raises(ConfigError, match="duplicate tool name 'book_flight'"):
        Toolbox([tool, tool])


def test_registries_import_their_plugins_lazily_and_suggest_names() -> None:
    from freyr_dspy.benchmarks import get_benchmark
    from freyr_dspy.domains import get_domain
    from freyr_dspy.errors import UnknownNameError
    from freyr_dspy.strategies import get_strategy

    assert get_strategy("native").name == "native"  # registered by a plugin module
    assert get_domain("todo").name == "todo"
    with pytest.raises(
        UnknownNameError, match=r"unknown benchmark 'llmakr'.*Did you mean 'llmaker'"
    ):
        get_benchmark("llmakr")
