"""``Toolbox.from_openai``: OpenAI tool dicts as users bring them, executed or spec-only."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.domains import Domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Toolbox

WEATHER = {
    "type": "function",
    "function": {
        "name": "get-weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "city name"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
}
HYPOT = {
    "name": "math.hypot",
    "description": "Hypotenuse of a right triangle.",
    "parameters": {
        "type": "object",
        "properties": {"legs": {"type": "array", "items": {"type": "float"}}},
        "required": ["legs"],
    },
}
RESPONSES_STYLE = {"type": "function", "name": "ping", "description": "Check the service."}


def hypot(legs: list[float]) -> float:
    return float(sum(x * x for x in legs) ** 0.5)


def test_both_shapes_are_read_in_order_with_their_schemas() -> None:
    box = Toolbox.from_openai([WEATHER, HYPOT, RESPONSES_STYLE], library="misc")
    assert box.names == ["get-weather", "math.hypot", "ping"]
    assert box.libraries == {"misc": ["get-weather", "math.hypot", "ping"]}
    assert box.get("get-weather").openai_schema() == WEATHER
    assert box.get("math.hypot").json_schema()["properties"]["legs"]["items"] == {"type": "number"}
    assert box.get("ping").json_schema() == {"type": "object", "properties": {}, "required": []}


def test_functions_execute_and_the_others_are_spec_only() -> None:
    box = Toolbox.from_openai([WEATHER, HYPOT], {"math.hypot": hypot})
    assert box.execute("math.hypot", {"legs": ["3", 4]}).outcome.message == "5.0"
    weather = box.execute("get-weather", {"city": "Oslo", "unit": "C"})
    assert weather.outcome.ok and "recorded" in weather.outcome.message
    assert weather.arguments == {"city": "Oslo", "unit": "c"}


def test_bad_calls_are_error_outcomes_for_the_model() -> None:
    box = Toolbox.from_openai([WEATHER, HYPOT], {"math.hypot": hypot})
    assert box.execute("get-wether", {}).outcome.message.startswith(
        "unknown tool 'get-wether'; available tools: get-weather, math.hypot."
    )
    wrong = box.execute("math.hypot", {"legs": "three and four"}).outcome
    assert not wrong.ok
    assert (
        wrong.message == "math.hypot: argument 'legs' expects array of number, got 'three and four'"
    )
    missing = box.execute("get-weather", {"unit": "kelvin"}).outcome.message
    assert missing == (
        "get-weather: argument 'unit' expects one of 'c', 'f', got 'kelvin'; "
        "missing required argument 'city': string (city name)"
    )


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (WEATHER, r"OpenAI tools: expected a list of tool dicts, got dict \(wrap a single tool"),
        ("get-weather", "OpenAI tools: expected a list of tool dicts, got str"),
        ([WEATHER, "ping"], "OpenAI tool #2: expected a dict, got str"),
        ([{"type": "retrieval"}], "OpenAI tool #1: type 'retrieval' is not a function tool"),
        ([{"type": "function", "function": "ping"}], "OpenAI tool #1: 'function' must be a dict"),
        ([{"description": "x"}], r"OpenAI tool #1: needs a non-empty string 'name' \(keys given: "),
        ([{"name": "  "}], "OpenAI tool #1: needs a non-empty string 'name'"),
        ([{"name": "a", "description": ["x"]}], r"OpenAI tool #1 \(a\): 'description' must be"),
        ([{"name": "a", "parameters": "{}"}], "tool 'a': parameters must be a JSON schema object"),
        (
            [{"name": "a", "parameters": {"properties": {"n": {"type": "number?"}}}}],
            "tool 'a': unknown type 'number[?]' at parameters.properties.n.type",
        ),
        ([HYPOT, HYPOT], "duplicate tool name 'math.hypot'"),
    ],
)
def test_malformed_input_is_a_one_line_config_error(tools: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        Toolbox.from_openai(tools)
    assert "\n" not in str(info.value)


def test_functions_must_name_tools_and_be_callable() -> None:
    with pytest.raises(ConfigError, match=r"unknown tools 'math\.hypo'; the tools are get-weather"):
        Toolbox.from_openai([WEATHER, HYPOT], {"math.hypo": hypot})
    with pytest.raises(ConfigError, match=r"Did you mean 'math\.hypot'"):
        Toolbox.from_openai([WEATHER, HYPOT], {"math.hypo": hypot})
    with pytest.raises(ConfigError, match=r"tool 'math\.hypot': function must be callable"):
        Toolbox.from_openai([HYPOT], {"math.hypot": 3})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="functions must map tool names to callables, got list"):
        Toolbox.from_openai([HYPOT], [hypot])  # type: ignore[arg-type]


def test_a_program_plans_and_calls_tools_with_dotted_and_dashed_names() -> None:
    box = Toolbox.from_openai([WEATHER, HYPOT], {"math.hypot": hypot})

    def answer(call: FakeCall) -> Any:
        if call.role == "intent":
            assert "- math.hypot: Hypotenuse" in call.inputs["tools"]
            return {"intents": ["math.hypot", "get-weather"]}
        if call.role == "confirm":
            return {"asked": {"math.hypot": True, "get-weather": True}}
        if call.role == "parameters":
            if "math.hypot" in call.inputs["tool"]:
                assert "legs (array of number, required)" in call.inputs["tool"]
                return {"arguments": {"legs": [3, "4"]}}
            return {"arguments": {"city": "Oslo"}}
        return {"reply": "5, and the weather call is noted."}

    engine = FunctionLM(answer)
    program = FreyrProgram(Domain("mine", "my tools", make_toolbox=lambda: box))
    program.set_lm(dspy.LM("fake/openai-tools", engine=engine, cache=False))
    result = program(message="hypotenuse of 3 and 4, and the weather in Oslo").result
    assert [(c.tool, c.outcome.ok) for c in result.calls] == [
        ("math.hypot", True),
        ("get-weather", True),
    ]
    assert result.calls[0].outcome.message == "5.0"
    assert "recorded" in result.calls[1].outcome.message
    assert engine.roles_called() == ["intent", "confirm", "parameters", "parameters", "summary"]
