"""A second round of calls when a value comes from a result, and results shown to later calls."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies.freyr import Freyr
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def locate() -> str:
    """Find the city the user is in."""
    return "You are in Oslo."


def weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: 2 °C"


TOOLS = Toolbox([Tool.from_function(locate), Tool.from_function(weather)])


def program(plans: list[list[str]], **settings: Any) -> tuple[FreyrProgram, FunctionLM]:
    """The intent role answers ``plans`` in turn; the parameters role reads the results."""
    answers = iter(plans)

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            return {"intents": next(answers)}
        if call.role == "parameters":
            seen = call.inputs["conversation"]
            return {"arguments": {"city": "Oslo"} if "returned You are in Oslo" in seen else {}}
        if call.role == "confirm":
            return {"asked": {"locate": True, "weather": True}}
        return {"reply": "It is 2 °C in Oslo."}

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=TOOLS, strategy=Freyr(**settings))
    prog.set_lm(dspy.LM("fake/rounds", engine=engine, cache=False))
    return prog, engine


def test_a_call_whose_value_comes_from_a_result_is_made_in_a_second_round() -> None:
    prog, engine = program([["locate"], ["locate", "weather"]])
    result = prog(message="Find my city, then tell me its weather.").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("locate", {}),
        ("weather", {"city": "Oslo"}),
    ]
    assert result.intents == ["locate", "weather"]
    # locate needs no arguments; the second plan names two tools, so confirm checks it
    assert engine.roles_called() == ["intent", "intent", "confirm", "parameters", "summary"]
    assert result.reply == "It is 2 °C in Oslo."


def test_calls_planned_together_see_the_results_before_them() -> None:
    prog, engine = program([["locate", "weather"], ["locate", "weather"]])
    result = prog(message="Find my city, then tell me its weather.").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("locate", {}),
        ("weather", {"city": "Oslo"}),
    ]
    # the second plan adds nothing: each of its calls was made, so no call is repeated
    assert engine.roles_called() == [
        "intent", "confirm", "parameters", "intent", "confirm", "summary"
    ]  # fmt: skip


def test_one_round_plans_once() -> None:
    prog, engine = program([["locate"]], rounds=1)
    calls = prog(message="Where am I, and the weather?").result.calls
    assert [c.tool for c in calls] == ["locate"]
    assert engine.roles_called() == ["intent", "summary"]


def test_recorded_calls_return_nothing_to_plan_from() -> None:
    prog, engine = program([["locate"]])
    recorded = FreyrProgram(toolbox=TOOLS.spec_only(), strategy=Freyr())
    recorded.set_lm(prog.strategy.intent.predict.lm)
    result = recorded(message="Where am I?", calls_only=True).result
    assert [c.tool for c in result.calls] == ["locate"]
    assert engine.roles_called() == ["intent"]
