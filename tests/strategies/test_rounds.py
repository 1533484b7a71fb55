"""A second round when a value comes from a result, and results shown to later calls."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def locate() -> str:
    """Find the user's address."""
    return "Your address is 4 Elm Road, Oslo."


def weather(city: str) -> str:
    """Current weather in a city."""
    return f"{city}: 2 °C"


def city_of(address: str) -> str:
    """The city of a street address."""
    return "Oslo"


TOOLS = Toolbox([Tool.from_function(f) for f in (locate, weather, city_of)])


def program(plans: list[list[str]], **settings: Any) -> tuple[FreyrProgram, FunctionLM]:
    """The intent role answers ``plans`` in turn; parameters take values from the results."""
    answers = iter(plans)

    def answer(call: FakeCall) -> Any:
        seen = call.inputs.get("conversation", "")
        if call.role == "intent":
            return {"intents": next(answers)}
        if call.role == "parameters" and "city_of" in call.inputs["tool"]:
            return {"arguments": {"address": "4 Elm Road, Oslo"}}
        if call.role == "parameters":  # a city only once a result names one, else a guess
            return {"arguments": {"city": "Oslo" if "returned Oslo" in seen else "Lima"}}
        if call.role == "confirm":
            return {"asked": dict.fromkeys(("locate", "weather", "city_of"), True)}
        return {"reply": "It is 2 °C in Oslo."}

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=TOOLS, strategy=make_strategy("freyr", **settings))
    prog.set_lm(dspy.LM("fake/rounds", engine=engine, cache=False))
    return prog, engine


def test_calls_planned_together_see_the_results_before_them() -> None:
    prog, engine = program([["city_of", "weather"]])
    result = prog(message="What is the weather at 4 Elm Road, Oslo?").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("city_of", {"address": "4 Elm Road, Oslo"}),
        ("weather", {"city": "Oslo"}),
    ]
    # no call waited, so the plan is not made again
    assert engine.roles_called() == ["intent", "confirm", "parameters", "parameters", "summary"]


def test_a_call_whose_value_comes_from_no_result_yet_waits_for_a_second_round() -> None:
    prog, engine = program([["locate", "weather"], ["locate", "city_of", "weather"]])
    result = prog(message="Find my address, then tell me the weather there.").result
    # weather(city="Lima") named a city nobody gave: it waited; the second plan adds city_of
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("locate", {}),
        ("city_of", {"address": "4 Elm Road, Oslo"}),
        ("weather", {"city": "Oslo"}),
    ]
    assert result.waiting == [] and result.open_asks == []
    assert engine.roles_called().count("intent") == 2


def test_in_the_last_round_nothing_waits() -> None:
    prog, engine = program([["locate", "weather"]], rounds=1)
    result = prog(message="Find my address, then tell me the weather there.").result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("locate", {}),
        ("weather", {"city": "Lima"}),  # as written: one plan, no round to wait for
    ]
    assert result.waiting == [] and engine.roles_called().count("intent") == 1


def test_recorded_calls_return_nothing_so_nothing_waits() -> None:
    prog, engine = program([["locate", "weather"]])
    recorded = FreyrProgram(toolbox=TOOLS.spec_only(), strategy=Freyr())
    recorded.set_lm(prog.strategy.intent.predict.lm)
    result = recorded(message="Find my address and the weather there.", calls_only=True).result
    assert [c.tool for c in result.calls] == ["locate", "weather"]
    assert engine.roles_called().count("intent") == 1
