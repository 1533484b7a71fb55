"""Every strategy is servable: ``native`` and ``prompted`` answer each ``tool_choice`` too.

They run whole (no plan apart from the calls): a first turn gives the calls, the results sent
back give a reply in words, ``none`` a reply with no tool offered, a named tool only that tool.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import Answer, FakeCall
from tests.support.serve_helpers import ASK_WEATHER, TOOLS, make_program, serving

REPLY = "It is 21 C in Paris."


def native(call: FakeCall) -> Answer | None:
    """The model's own tool calls: the weather while tools are offered, else a reply."""
    if call.role != "native":
        return None
    if call.tools and "21 C" not in call.prompt:
        return {"tool_calls": [{"name": call.tools[0], "args": _arguments(call.tools[0])}]}
    return {"response": REPLY}


def prompted(call: FakeCall) -> Answer | None:
    """Calls written as JSON in the reply text while the catalog has tools, else a reply."""
    if call.role != "prompted":
        return None
    named = next((name for name in ("get_weather", "get_time") if name in call.prompt), None)
    if named and "21 C" not in call.prompt:
        return {"response": json.dumps({"tool": named, "parameters": _arguments(named)})}
    return {"response": REPLY}


def _arguments(tool: str) -> dict[str, Any]:
    return {"location": "Paris"} if tool == "get_weather" else {"timezone": "Europe/Paris"}


def post(base: str, body: dict[str, Any]) -> dict[str, Any]:
    import httpx

    response = httpx.post(f"{base}/chat/completions", json={"model": "m", **body}, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["choices"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("strategy", "fn"), [("native", native), ("prompted", prompted)])
def test_a_strategy_that_runs_whole_answers_every_mode(strategy: str, fn: Any) -> None:
    program, _ = make_program(fn, strategy=strategy)
    with serving(ServedProgram("m", program)) as base:
        first = post(base, {"messages": ASK_WEATHER, "tools": TOOLS})
        [call] = first["message"]["tool_calls"]
        results = [
            *ASK_WEATHER,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "21 C, sunny"},
        ]
        after = post(base, {"messages": results, "tools": TOOLS})
        words = post(base, {"messages": ASK_WEATHER, "tools": TOOLS, "tool_choice": "none"})
        named = {"type": "function", "function": {"name": "get_time"}}
        forced = post(base, {"messages": ASK_WEATHER, "tools": TOOLS, "tool_choice": named})
    assert first["finish_reason"] == "tool_calls"
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"location": "Paris"}
    # The results come back: the same call is not made again, the reply reports them.
    assert after["finish_reason"] == "stop" and after["message"]["content"] == REPLY
    assert words["message"]["tool_calls"] is None and words["message"]["content"] == REPLY
    assert [c["function"]["name"] for c in forced["message"]["tool_calls"]] == ["get_time"]


def test_a_reply_schema_is_refused_where_no_role_writes_the_reply_alone() -> None:
    import httpx

    program, _ = make_program(native, strategy="native")
    schema = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}}
    with serving(ServedProgram("m", program)) as base:
        response = httpx.post(
            f"{base}/chat/completions",
            json={"model": "m", "messages": ASK_WEATHER, "response_format": schema},
            timeout=30,
        )
    assert response.status_code == 400
    assert "writes its reply in the same model call" in response.json()["error"]["message"]
