"""Which gold demos a plan is shown first: the decisions small models get wrong."""

from __future__ import annotations

import dspy

from freyr_dspy.compiling._gold import ask_quotes, plan_decision, select_demos


def intent_demo(message: str, *intents: str) -> dspy.Example:
    return dspy.Example(message=message, intents=list(intents))


def test_a_plan_shows_no_call_then_several_calls_before_one_call_demos() -> None:
    demos = [
        intent_demo("weather in Oslo", "get_weather"),
        intent_demo("set an alarm", "set_alarm"),
        intent_demo("book a taxi", "conversation"),
        intent_demo("weather in Oslo and Rome", "get_weather", "get_weather"),
    ]
    for seed in range(5):
        chosen = select_demos(demos, 3, outputs=["intents"], seed=seed)
        assert [plan_decision(d) for d in chosen] == ["no-call", "several", "one"]
    assert plan_decision(dspy.Example(asks=[{"ask": "hi", "tool": "none"}])) == "no-call"
    assert plan_decision(dspy.Example(arguments={"city": "Oslo"})) == "other"


def test_ask_quotes_cut_a_request_where_each_call_takes_its_values() -> None:
    calls = [{"city": "Oslo"}, {"city": "Paris"}]
    assert ask_quotes("What is the weather in Oslo and in Paris?", calls) == [
        "What is the weather in Oslo",
        "in Paris",
    ]
    assert ask_quotes("Weather in Oslo?", [{"city": "Oslo"}]) == ["Weather in Oslo?"]
    # values no clause states: the whole request
    assert ask_quotes("Do both, please", [{"x": "a"}, {"x": "b"}]) == ["Do both, please"] * 2
