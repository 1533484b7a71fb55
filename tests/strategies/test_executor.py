"""The ``ToolExecutor``: arguments checked against what was said, state committed on success."""

from __future__ import annotations

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import CallPolicy, Ledger, Run
from freyr_dspy.strategies._executor import ToolExecutor
from freyr_dspy.strategies._grounding import Evidence
from freyr_dspy.tools import Tool, Toolbox


def create_event(title: str, state: list[str], minutes: int = 30) -> str:
    """Create a calendar event.

    Args:
        title: the event's title, e.g. 'Weekly sync'.
        minutes: how long it lasts.
    """
    if not title.strip():
        raise ValueError("title is empty")
    state.append(title)
    return f"created {title}"


TOOLBOX = Toolbox([Tool.from_function(create_event)])


def executor(message: str, *, grounding: bool = True) -> ToolExecutor:
    ledger = Ledger(state=[])
    return ToolExecutor(TOOLBOX, ledger, lambda: Evidence.of(message), grounding=grounding)


def test_an_optional_value_nobody_stated_is_left_out() -> None:
    tools = executor("Create an event called standup")
    assert tools.grounded("create_event", {"title": "standup", "minutes": 45}) == (
        {"title": "standup"},
        ["minutes"],
    )
    assert tools.grounded("create_event", {"title": "standup", "minutes": 45})[0] != {}
    stated = executor("Create a 45 minute event called standup")
    assert stated.grounded("create_event", {"title": "standup", "minutes": 45})[1] == []


def test_a_copied_example_is_refused_once_then_stands() -> None:
    tools = executor("Create an event for the team")
    refusal = tools.refusal("create_event", {"title": "Weekly sync"})
    assert refusal is not None and "title" in refusal and "Weekly sync" not in refusal
    assert tools.refusal("create_event", {"title": "Weekly sync"}) is None
    assert (
        executor("Create the Weekly sync event").refusal("create_event", {"title": "Weekly sync"})
        is None
    )


def test_without_grounding_nothing_is_dropped_or_refused() -> None:
    tools = executor("Create an event for the team", grounding=False)
    assert tools.grounded("create_event", {"title": "Weekly sync", "minutes": 45})[1] == []
    assert tools.refusal("create_event", {"title": "Weekly sync"}) is None


def test_state_is_committed_only_when_the_call_succeeds() -> None:
    tools = executor("Create an event called standup")
    assert tools.run("create_event", {"title": " "}).ok is False
    assert tools.ledger.state == []
    assert tools.execute("create_event", {"title": "standup"}).ok
    assert tools.ledger.state == ["standup"]


def test_unstated_and_echoed_values_are_named() -> None:
    tools = executor("Create an event")
    assert tools.unstated("create_event", {"title": "Planning"}) == ["title"]
    assert tools.unstated("create_event", {"title": "event"}) == []
    assert tools.unstated("no_such_tool", {"title": "Planning"}) == []
    error = "the title you wrote is empty"
    assert tools.echoed({"title": "the title you wrote"}, error) == ["title"]
    assert tools.echoed({"title": "the title you wrote"}, "") == []
    assert tools.echoed({"title": "empty"}, error) == []  # a short value may be listed


@pytest.mark.parametrize("grounding", [True, False])
def test_a_run_hands_out_an_executor_grounded_as_the_policy_says(grounding: bool) -> None:
    program = FreyrProgram(toolbox=TOOLBOX, ground_arguments=grounding)
    run: Run = program.start_run("Create an event called standup")
    tools = run.tools(program.strategy.calling)
    assert tools.grounding is grounding and tools.ledger is run.ledger
    assert tools.grounded("create_event", {"title": "standup", "minutes": 45})[1] == (
        ["minutes"] if grounding else []
    )
    assert CallPolicy(ground_arguments=grounding) == program.strategy.calling
