"""Asks, results shown to later calls, and grounded replies on the real Qwen models.

The fakes of test_asks.py and test_rounds.py check the logic; here the real model plans,
writes the arguments and the reply. Greedy decoding with a fixed seed: the same answer every
run on this build.
"""

from __future__ import annotations

import pytest

from freyr_dspy.datasets._replies import invented_numbers
from freyr_dspy.program import FreyrProgram
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

SMALL, DEFAULT = "embedded/qwen2.5-coder-0.5b", "embedded/qwen2.5-coder-1.5b"
GREEDY = ("temperature=0", "seed=0")
WEATHER = {"Oslo": "Oslo: 2 °C, light snow", "Paris": "Paris: 11 °C, cloudy"}


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return WEATHER.get(city, f"no report for {city}")


def locate() -> str:
    """Find the city the user is in right now."""
    return "You are in Oslo."


TOOLS = Toolbox([Tool.from_function(get_weather), Tool.from_function(locate)])


def program(model: str, strategy: str) -> FreyrProgram:
    return FreyrProgram.for_model(model, toolbox=TOOLS, strategy=strategy, sampling=GREEDY)


def test_a_later_call_takes_its_value_from_the_result_before_it() -> None:
    result = program(SMALL, "freyr+asks")(
        message="Find out where I am, then give me the weather there."
    ).result
    assert [(c.tool, c.arguments) for c in result.calls] == [
        ("locate", {}),
        ("get_weather", {"city": "Oslo"}),  # from "You are in Oslo.", not made up
    ]


def test_the_reply_states_no_result_a_tool_did_not_return() -> None:
    message = "What's the weather in Oslo and in Paris?"
    result = program(SMALL, "freyr+asks")(message=message).result
    returned = [c.outcome.message for c in result.calls if c.outcome.ok]
    assert result.calls and invented_numbers(result.reply, [message, *returned]) == []
    for call in result.calls:  # and what the calls did return is in it
        assert WEATHER[call.arguments["city"]].split(": ")[1].split(",")[0] in result.reply


@pytest.mark.slow
def test_two_asks_of_one_tool_are_two_calls_on_the_default_model() -> None:
    result = program(DEFAULT, "preset+asks")(
        message="What's the weather in Oslo and in Paris?"
    ).result
    assert sorted(c.arguments["city"] for c in result.calls) == ["Oslo", "Paris"]
    assert "2 °C" in result.reply and "11 °C" in result.reply
