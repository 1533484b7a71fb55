"""Planning from asks (``freyr+asks``) and replies grounded in the outcomes, on fake LMs."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str) -> str:
    """Current weather in a city."""
    return {"Oslo": "Oslo: 2 °C, light snow", "Paris": "Paris: 11 °C, cloudy"}[city]


def convert(amount: float, source: str, target: str) -> str:
    """Convert an amount of money between currencies."""
    return f"{amount} {source} is {amount * 0.5} {target}"


TOOLS = Toolbox([Tool.from_function(weather), Tool.from_function(convert)])
WEATHER_ONLY = Toolbox([Tool.from_function(weather)])


def program(
    toolbox: Toolbox, answers: dict[str, Any], **settings: Any
) -> tuple[FreyrProgram, FunctionLM]:
    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=toolbox, strategy=make_strategy("freyr", asks=True, **settings))
    prog.set_lm(dspy.LM("fake/asks", engine=engine, cache=False))
    return prog, engine


def two_cities(call: FakeCall) -> dict[str, Any]:
    """The parameters role writes both calls, as the note listing the asks requests."""
    assert '1. "weather in Oslo" 2. "and in Paris"' in call.inputs["tool"]
    return {"arguments": {"calls": [{"city": "Oslo"}, {"city": "Paris"}]}}


def test_two_asks_of_one_tool_become_two_calls_written_from_their_own_words() -> None:
    prog, engine = program(
        WEATHER_ONLY,
        {
            "asks": {
                "asks": [
                    {"ask": "weather in Oslo", "tool": "weather"},
                    {"ask": "and in Paris", "tool": "weather"},
                ]
            },
            "confirm": {"asked": {"weather": True}},
            "parameters": two_cities,
            "summary": {"reply": "Oslo has 2 °C with light snow; Paris 11 °C and cloudy."},
        },
    )
    result = prog(message="What's the weather in Oslo and in Paris?").result
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {"city": "Paris"}]
    assert result.reply == "Oslo has 2 °C with light snow; Paris 11 °C and cloudy."
    assert result.open_asks == [] and result.unsupported == []
    assert engine.roles_called() == ["asks", "parameters", "summary"]


def test_an_ask_no_tool_fits_gets_no_call_the_others_run_and_the_reply_names_it() -> None:
    prog, engine = program(
        WEATHER_ONLY,
        {
            "asks": {
                "asks": [
                    {"ask": "weather in Paris", "tool": "weather"},
                    {"ask": "100 USD in EUR", "tool": "none"},
                ]
            },
            "parameters": {"arguments": {"city": "Paris"}},
            # what a small model writes: a result for the ask no tool answered
            "summary": {"reply": "Paris is 11 °C and cloudy, and 100 USD is 92 EUR."},
        },
    )
    result = prog(message="Weather in Paris, and what is 100 USD in EUR?").result
    assert [c.tool for c in result.calls] == ["weather"]
    assert [a.ask for a in result.open_asks] == ["100 USD in EUR"]
    summary = next(c for c in engine.calls if c.role == "summary")
    assert "not done: '100 USD in EUR'" in summary.inputs["outcomes"]
    assert result.unsupported == ["92"]
    assert "92" not in result.reply
    assert result.reply.startswith("weather: Paris: 11 °C, cloudy.")
    assert 'I could not do "100 USD in EUR"' in result.reply


def test_a_reply_that_states_only_results_is_kept_and_an_unnamed_open_ask_is_added() -> None:
    prog, _ = program(
        TOOLS,
        {
            "asks": {
                "asks": [
                    {"ask": "weather in Oslo", "tool": "weather"},
                    {"ask": "book a taxi", "tool": "none"},
                ]
            },
            "confirm": {"asked": {"weather": True}},
            "parameters": {"arguments": {"city": "Oslo"}},
            "summary": {"reply": "It is 2 °C in Oslo with light snow."},
        },
    )
    result = prog(message="Weather in Oslo? Also book a taxi.").result
    assert result.unsupported == []
    assert result.reply == (
        'It is 2 °C in Oslo with light snow. I could not do "book a taxi" '
        "(none of the offered tools does this)."
    )


def test_a_request_whose_every_ask_has_no_tool_is_answered_in_words() -> None:
    prog, engine = program(
        WEATHER_ONLY,
        {
            "asks": {"asks": [{"ask": "Hi there!", "tool": "none"}]},
            "chat": {"reply": "Hello! I can look up the weather."},
        },
    )
    result = prog(message="Hi there!").result
    assert result.calls == [] and result.reply == "Hello! I can look up the weather."
    assert engine.roles_called() == ["asks", "chat"]


def test_an_ask_whose_tool_the_check_rejects_stays_open() -> None:
    prog, _ = program(
        TOOLS,
        {
            "asks": {
                "asks": [
                    {"ask": "weather in Oslo", "tool": "weather"},
                    {"ask": "my bank balance", "tool": "convert"},
                ]
            },
            "confirm": {"asked": {"weather": True, "convert": False}},
            "parameters": {"arguments": {"city": "Oslo"}},
        },
    )
    result = prog(message="Weather in Oslo and my bank balance", calls_only=True).result
    assert [c.tool for c in result.calls] == ["weather"]
    assert [a.ask for a in result.open_asks] == ["my bank balance"]


def test_asks_holds_the_asks_role_in_place_of_intent_and_excludes_calibrate() -> None:
    assert make_strategy("freyr", asks=True).role_names == (
        "asks",
        "confirm",
        "parameters",
        "summary",
        "chat",
    )
    assert make_strategy("freyr", asks=True).config() == {"asks": True}
    with pytest.raises(ConfigError, match="calibrate"):
        make_strategy("freyr", asks=True, calibrate=True)


def test_malformed_asks_are_read_leniently() -> None:
    from freyr_dspy.roles._asks import AskLister

    role = AskLister()
    assert role.clean({"asks": "weather, convert"})["asks"] == [
        {"ask": "", "tool": "weather"},
        {"ask": "", "tool": "convert"},
    ]
    assert role.clean({"asks": [{"ask": "x"}, "weather", 3]})["asks"] == [
        {"ask": "", "tool": "weather"},
    ]
    assert role.parse_raw('[{"ask": "Oslo", "tool": "weather"')["asks"] == [
        {"ask": "Oslo", "tool": "weather"}
    ]


def chat_program(toolbox: Toolbox, reply: str) -> FreyrProgram:
    """Plain FREYR whose intent role answers in words and whose chat role says ``reply``."""
    answers = {"intent": {"intents": ["conversation"]}, "chat": {"reply": reply}}
    prog = FreyrProgram(toolbox=toolbox)
    prog.set_lm(dspy.LM("fake/chat", engine=FunctionLM(lambda c: answers[c.role]), cache=False))
    return prog


def test_a_chat_reply_with_a_figure_no_offered_tool_returned_is_replaced() -> None:
    # offered the weather tool, the 0.5B chose words and made the temperature up
    reply = "The weather in Paris is mostly clear, around 22°C."
    result = chat_program(WEATHER_ONLY, reply)(message="What is the weather in Paris?").result
    assert result.calls == [] and result.unsupported == ["22"]
    assert "22" not in result.reply


def test_a_chat_reply_without_tools_on_offer_keeps_its_own_numbers() -> None:
    reply = "A week has 7 days."
    result = chat_program(Toolbox([]), reply)(message="How many days has a week?").result
    assert result.reply == reply and result.unsupported == []


def test_a_chat_reply_quoting_the_tool_catalog_invents_nothing() -> None:
    def alarm(minutes: int) -> str:
        """Set an alarm up to 1440 minutes ahead."""
        return "set"

    reply = "I can only set alarms up to 1440 minutes ahead, not reminders."
    tools = Toolbox([Tool.from_function(alarm)])
    result = chat_program(tools, reply)(message="Remind me about mum's birthday").result
    assert result.reply == reply and result.unsupported == []
