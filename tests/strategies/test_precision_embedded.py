"""FREYR's no-call mechanisms on the real 0.5B: ``require_stated`` and ``abstain``.

The fakes of test_freyr_precision.py check the logic; here the real model writes the
arguments and the real check refuses a value the request never gave. A model writes *some*
city for "what's the weather like?": whatever it writes, the request does not state it.
"""

from __future__ import annotations

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
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
