"""``freyr+abstain+lone_tool``: one action offered is planned without the planning role, and
the confirm role alone decides whether the request asks for it."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def set_alarm(time: str) -> str:
    """Set an alarm."""
    return f"alarm at {time}"


def list_alarms() -> str:
    """The alarms set."""
    return "07:00"


def program(tools: list[Tool], asked: bool) -> tuple[FreyrProgram, FunctionLM]:
    """The confirm role keeps the plan when ``asked``; the intent role plans every tool."""

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": [tool.name for tool in tools]}
        if call.role == "confirm":
            return {"asked": {tool.name: asked for tool in tools}}
        if call.role == "parameters":
            return {"arguments": {"time": "07:30"} if "time" in call.inputs["tool"] else {}}
        return {"reply": "Done." if asked else "I can only set alarms."}

    engine = FunctionLM(answer)
    strategy = make_strategy("freyr", abstain=True, lone_tool=True)
    prog = FreyrProgram(toolbox=Toolbox(tools), strategy=strategy)
    prog.set_lm(dspy.LM("fake/lone", engine=engine, cache=False))
    return prog, engine


ALARM, ALARMS = Tool.from_function(set_alarm), Tool.from_function(list_alarms, read_only=True)


def test_one_action_is_planned_without_the_intent_role() -> None:
    prog, engine = program([ALARM], asked=True)
    result = prog(message="Wake me at 7:30").result
    assert [(c.tool, c.arguments) for c in result.calls] == [("set_alarm", {"time": "07:30"})]
    assert engine.roles_called() == ["confirm", "parameters", "summary"]


def test_the_check_alone_declines_a_request_the_action_does_not_fit() -> None:
    prog, engine = program([ALARM], asked=False)
    result = prog(message="What is the capital of Peru?").result
    assert result.calls == [] and result.reply == "I can only set alarms."
    assert "intent" not in engine.roles_called()


@pytest.mark.parametrize("tools", [[ALARMS], [ALARM, ALARMS]], ids=["a read", "two tools"])
def test_a_read_or_a_choice_of_tools_is_still_planned(tools: list[Tool]) -> None:
    prog, engine = program(tools, asked=True)
    prog(message="Wake me at 7:30")
    assert engine.roles_called()[0] == "intent"


def test_lone_tool_needs_the_abstain_check() -> None:
    with pytest.raises(ConfigError, match="lone_tool"):
        make_strategy("freyr", lone_tool=True)
