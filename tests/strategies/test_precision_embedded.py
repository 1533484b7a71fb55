"""FREYR's no-call mechanisms on the real 0.5B: ``require_stated``, ``abstain``, and its preset.

The fakes of test_freyr_precision.py check the logic; here the real model writes the
arguments and the real check refuses a value the request never gave. A model writes *some*
city for "what's the weather like?": whatever it writes, the request does not state it.
"""

from __future__ import annotations

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._presets import default_strategy
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/qwen2.5-coder-0.5b"


def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city to report on.
    """
    return f"sunny in {city}"


def program(**switches: bool) -> FreyrProgram:
    tools = Toolbox([Tool.from_function(get_weather)])
    prog = FreyrProgram(toolbox=tools, strategy=make_strategy("freyr", **switches))
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    return prog.apply_assignment(dict.fromkeys(prog.role_names, greedy))


def test_require_stated_makes_no_call_with_a_city_nobody_named_on_the_real_model() -> None:
    result = program(require_stated=True)(message="What's the weather like?").result
    made = [call for call in result.calls if call.outcome.ok]
    assert made == []
    assert all(call.never_made for call in result.calls)
    assert result.reply  # the chat role answers, and may ask which city


def test_require_stated_makes_the_call_the_request_states_on_the_real_model() -> None:
    result = program(require_stated=True)(message="What's the weather like in Oslo?").result
    assert [(c.tool, c.arguments, c.outcome.ok) for c in result.calls] == [
        ("get_weather", {"city": "Oslo"}, True)
    ]


def test_abstain_asks_the_confirm_role_about_a_one_tool_plan_on_the_real_model() -> None:
    result = program(abstain=True)(message="What's the weather like in Oslo?").result
    assert result.usage["confirm"].lm_calls == 1  # plain freyr does not check one tool
    assert [c.tool for c in result.calls] in ([], ["get_weather"])


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount of money from one currency to another at today's rate.

    Args:
        amount: the amount to convert.
        from_currency: ISO code of the currency to convert from, e.g. USD.
        to_currency: ISO code of the currency to convert to, e.g. EUR.
    """
    return f"{amount} {from_currency} is about {amount} {to_currency}"


def test_the_presets_scored_one_tool_verdict_keeps_the_call_asked_for_on_the_real_model() -> None:
    """The 0.5B's preset scores a one-tool plan (``abstain`` + ``scored_confirm``) and keeps it.

    Too strict a margin would answer an asked conversion in words. Offered one tool, the 0.5B
    plans it for nearly any message ("Tell me a joke." -> ``convert_currency(100, USD, EUR)``
    with plain or calibrated FREYR); the scored verdict on that one-tool plan drops it.
    """
    tools = Toolbox([Tool.from_function(convert_currency)])
    prog = FreyrProgram(toolbox=tools, strategy=default_strategy(MODEL))
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    prog = prog.apply_assignment(dict.fromkeys(prog.role_names, greedy))

    asked = prog(message="Convert 120 US dollars to euros.", calls_only=True).result
    assert [(c.tool, c.arguments) for c in asked.calls] == [
        ("convert_currency", {"amount": 120, "from_currency": "USD", "to_currency": "EUR"})
    ]
    assert asked.usage["confirm"].lm_calls == 1  # scored: one prompt, one verdict
    chat = prog(message="Tell me a joke.", calls_only=True).result
    assert chat.calls == [] and chat.reply
    assert chat.usage["confirm"].lm_calls == 1  # planned, then dropped by the verdict


def test_calls_recorded_not_run_are_listed_not_summarised_on_the_real_model() -> None:
    """A spec-only tool's call is recorded: the reply lists it, and no summary is written.

    Asked to summarise recorded calls, the model reported results no tool had computed.
    """
    spec = Toolbox.from_openai([Tool.from_function(convert_currency).openai_schema()])
    prog = FreyrProgram(toolbox=spec, strategy=default_strategy(MODEL))
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    prog = prog.apply_assignment(dict.fromkeys(prog.role_names, greedy))

    result = prog(message="Convert 120 US dollars to euros.").result
    assert [c.tool for c in result.calls] == ["convert_currency"]
    assert result.reply.startswith("Prepared, not run (these tools have no function here): ")
    assert "convert_currency(amount=120" in result.reply
    assert "summary" not in result.usage or result.usage["summary"].lm_calls == 0
