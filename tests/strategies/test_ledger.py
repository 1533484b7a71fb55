"""A run's inputs are frozen; its ``Ledger`` is the one record of what it did."""

from __future__ import annotations

import dataclasses

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import CallRecord, Outcome
from freyr_dspy.strategies import Ledger
from freyr_dspy.strategies._call_watch import watching_calls
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


def alarm(time: str) -> str:
    """Set an alarm."""
    return f"alarm at {time}"


PROGRAM = FreyrProgram(toolbox=Toolbox([Tool.from_function(weather), Tool.from_function(alarm)]))


def test_a_run_cannot_be_changed_only_its_ledger_written() -> None:
    run = PROGRAM.start_run("weather in Oslo")
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.toolbox = Toolbox([])  # type: ignore[misc]
    with pytest.raises(AttributeError):
        run.intents = ["weather"]  # type: ignore[misc]
    assert run.ledger.plan(["weather"]) == ["weather"] and run.intents == ["weather"]


def test_a_narrower_run_writes_the_ledger_of_the_run_it_came_from() -> None:
    run = PROGRAM.start_run("weather in Oslo")
    narrow = dataclasses.replace(run, toolbox=PROGRAM.toolbox.subset(names=["weather"]))
    narrow.ledger.plan(["weather"])
    outcome = narrow.tools(PROGRAM.strategy.calling).execute("weather", {"city": "Oslo"})
    narrow.ledger.add_call(CallRecord(tool="weather", arguments={"city": "Oslo"}, outcome=outcome))
    assert run.intents == ["weather"] and [c.tool for c in run.calls] == ["weather"]
    assert len(run.toolbox) == 2 and len(narrow.toolbox) == 1


def test_calls_made_elsewhere_are_recorded_but_not_announced() -> None:
    heard: list[str] = []
    ledger = Ledger()
    answered = CallRecord(tool="weather", arguments={}, outcome=Outcome(ok=True, message="ok"))
    with watching_calls(lambda record: heard.append(record.tool)):
        ledger.add_made_elsewhere([answered])
        ledger.add_call(answered.model_copy(update={"tool": "alarm"}))
    assert [c.tool for c in ledger.calls] == ["weather", "alarm"] and heard == ["alarm"]
