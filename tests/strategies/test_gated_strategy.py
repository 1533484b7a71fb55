"""Strategy ``gated`` on strict fakes: the library gate, the gated catalog, the fallback."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.domains import Domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles import read_gate
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str) -> str:
    """Tell the weather of a city.

    Args:
        city: the city.
    """
    return f"sunny in {city}"


def make_box() -> Toolbox:
    tools = [Tool.from_function(weather, library="weather")]
    tools += [
        Tool(name=f"music_{i}", description=f"music tool {i}", library="music") for i in range(8)
    ]
    tools += [
        Tool(name=f"bank_{i}", description=f"bank tool {i}", library="banking") for i in range(8)
    ]
    return Toolbox(
        tools,
        {
            "weather": "forecasts",
            "music": "songs and playlists",
            "banking": "accounts and transfers",
        },
    )


DOMAIN = Domain("gate-test", "three libraries", make_toolbox=make_box)


def program(answers: dict[str, Any], **options: Any) -> tuple[FreyrProgram, FunctionLM]:
    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    engine = FunctionLM(answer)
    prog = FreyrProgram(DOMAIN, strategy=make_strategy("gated", **options))
    prog.set_lm(dspy.LM("fake/gate", engine=engine, cache=False))
    return prog, engine


def intent_weather_if_listed(call: FakeCall) -> dict[str, Any]:
    """A selector that picks weather only when the catalog it was shown contains it."""
    return {"intents": ["weather"] if "weather" in call.inputs["tools"] else ["conversation"]}


COMMON = {
    "parameters": {"arguments": {"city": "Oslo"}},
    "summary": {"reply": "sunny"},
    "chat": {"reply": "hi"},
}


def test_gate_hides_other_libraries_from_the_inner_selector() -> None:
    prog, engine = program(
        {**COMMON, "library": {"selected": ["weather"]}, "intent": intent_weather_if_listed}
    )
    result = prog(message="weather in Oslo?").result
    assert [c.tool for c in result.calls] == ["weather"] and result.calls[0].outcome.ok
    assert engine.roles_called() == ["library", "intent", "parameters", "summary"]
    assert "- weather:" in engine.calls[0].inputs["libraries"]
    shown = engine.calls[1].inputs["tools"]
    assert "weather" in shown and "music_0" not in shown and "bank_0" not in shown


def test_gate_saves_input_tokens_against_the_ungated_strategy() -> None:
    gated, _ = program(
        {**COMMON, "library": {"selected": ["weather"]}, "intent": intent_weather_if_listed}
    )
    gated_usage = gated(message="weather in Oslo?").result.usage
    plain = FreyrProgram(DOMAIN, strategy="freyr")
    plain.set_lm(
        dspy.LM(
            "fake/plain",
            engine=FunctionLM(
                lambda c: intent_weather_if_listed(c) if c.role == "intent" else COMMON[c.role]
            ),
            cache=False,
        )
    )
    plain_usage = plain(message="weather in Oslo?").result.usage
    assert gated_usage["intent"].input_tokens < plain_usage["intent"].input_tokens


def test_wrong_library_falls_back_to_the_full_catalog() -> None:
    prog, engine = program(
        {**COMMON, "library": {"selected": ["music"]}, "intent": intent_weather_if_listed}
    )
    result = prog(message="weather in Oslo?").result
    assert [c.tool for c in result.calls] == ["weather"]
    assert engine.roles_called() == ["library", "intent", "intent", "parameters", "summary"]
    assert "bank_0" not in engine.calls[1].inputs["tools"]
    assert "bank_0" in engine.calls[2].inputs["tools"]
    assert result.usage["intent"].lm_calls == 2


def test_selector_naming_a_hidden_tool_triggers_the_fallback() -> None:
    # The selector writes "weather" although the gate only showed music: the name is unknown
    # in the gated catalog but exists in the full one.
    prog, engine = program(
        {
            **COMMON,
            "library": {"selected": ["music"]},
            "intent": {"intents": ["weather", "music_1"]},
        }
    )
    result = prog(message="weather in Oslo?").result
    assert engine.roles_called()[:3] == ["library", "intent", "intent"]
    assert [c.tool for c in result.calls] == ["weather", "music_1"]


def test_unknown_library_means_the_full_catalog() -> None:
    prog, engine = program(
        {**COMMON, "library": {"selected": ["gardening"]}, "intent": intent_weather_if_listed}
    )
    prog(message="weather in Oslo?")
    assert engine.roles_called()[:2] == ["library", "intent"]
    assert "bank_0" in engine.calls[1].inputs["tools"]


def test_none_goes_straight_to_chat() -> None:
    prog, engine = program({**COMMON, "library": {"selected": ["none"]}})
    result = prog(message="thanks, bye").result
    assert result.reply == "hi" and result.calls == []
    assert engine.roles_called() == ["library", "chat"]


def test_inner_nlt_sees_only_the_gated_tools() -> None:
    def selection(call: FakeCall) -> dict[str, Any]:
        lines = [
            f"{line[2:].split(':')[0]} -- {'YES' if 'bank_3' in line else 'NO'}"
            for line in call.inputs["tools"].splitlines()
        ]
        return {"thinking": "", "assessment": "\n".join(lines)}

    prog, engine = program(
        {**COMMON, "library": {"selected": ["banking"]}, "tool_selection": selection},
        inner="nlt",
        respond=False,
    )
    result = prog(message="bank thing 3").result
    assert [c.tool for c in result.calls] == ["bank_3"]
    assert engine.roles_called() == ["library", "tool_selection"]
    assert "music_0" not in engine.calls[1].inputs["tools"]


def test_single_library_toolbox_is_not_gated() -> None:
    from freyr_dspy.domains import TODO

    engine = FunctionLM(
        lambda call: {"intents": ["conversation"]} if call.role == "intent" else {"reply": "hello"}
    )
    prog = FreyrProgram(
        Domain(
            "one",
            "one library",
            make_toolbox=lambda: Toolbox(t for t in TODO.make_toolbox() if t.library == "tasks"),
        ),
        strategy="gated",
    )
    prog.set_lm(dspy.LM("fake/one", engine=engine, cache=False))
    prog(message="hi")
    assert engine.roles_called() == ["intent", "chat"]


def test_unknown_inner_strategy_is_a_config_error_when_built() -> None:
    with pytest.raises(ConfigError, match="unknown inner strategy 'react'"):
        program({}, inner="react")


@pytest.mark.parametrize(
    ("written", "libraries", "no_tool"),
    [
        (["Weather"], ("weather",), False),
        ("music, banking", ("music", "banking"), False),
        (["none"], (), True),
        (["banking", "none"], ("banking",), False),
        ("- gardening", (), False),
        ([], (), False),
    ],
)
def test_read_gate(written: object, libraries: tuple[str, ...], no_tool: bool) -> None:
    gate = read_gate(written, ["weather", "music", "banking"])
    assert gate.libraries == libraries and gate.no_tool is no_tool
