"""``scripts/bench_serve_compare.py``: its scoring of answers, and one run on a fake model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.datasets import CallExample
from freyr_dspy.tools import Toolbox
from tests.support.scripts import load_script

TOOL = {
    "type": "function",
    "function": {
        "name": "get-weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
BOX = Toolbox.from_openai([TOOL])


def answer(content: str | None = None, *calls: tuple[str, str]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(calls)
    ]
    return {"choices": [{"message": {"content": content, "tool_calls": tool_calls or None}}]}


OSLO = CallExample.model_validate(
    {
        "id": "oslo",
        "message": "Weather in Oslo?",
        "calls": [{"name": "get-weather", "arguments": {"city": "Oslo"}}],
    }
)
HELLO = CallExample.model_validate({"id": "hi", "message": "Hello!", "calls": []})


def test_answers_are_scored_by_the_exact_call_check_and_schema_validity() -> None:
    compare = load_script("bench_serve_compare")
    right = compare.score(OSLO, BOX, answer(None, ("get-weather", '{"city": "Oslo"}')))
    assert right["exact"] and right["valid_tool_calls"] and right["tool_calls"] == 1
    wrong_type = compare.score(OSLO, BOX, answer(None, ("get-weather", '{"city": 3, "days": "x"}')))
    assert not wrong_type["valid_tool_calls"] and not wrong_type["exact"]
    broken = compare.score(OSLO, BOX, answer(None, ("get-weather", "{city")))
    assert not broken["valid_tool_calls"]
    as_text = compare.score(OSLO, BOX, answer('get-weather {"city": "Oslo"}'))
    assert as_text["calls_in_content"] and not as_text["exact"] and as_text["tool_calls"] == 0
    assert compare.score(HELLO, BOX, answer("Hi! How can I help?"))["exact"]


def test_a_summary_counts_each_figure_over_the_right_rows() -> None:
    compare = load_script("bench_serve_compare")
    rows = [
        compare.score(OSLO, BOX, answer(None, ("get-weather", '{"city": "Oslo"}')))
        | {"seconds": 1.0},
        compare.score(OSLO, BOX, answer("It is sunny.")) | {"seconds": 3.0},
        compare.score(HELLO, BOX, answer("Hi!")) | {"seconds": 2.0},
        {"id": "x", "category": "one-call", "expects_calls": True, "error": "500"},
    ]
    summary = compare.summarise(rows)
    assert summary["requests"] == 4 and summary["errors"] == 1
    assert summary["exact_pct"] == 50.0  # OSLO right once, HELLO right
    assert summary["answered_with_tool_calls_pct"] == pytest.approx(33.3)  # 1 of 3 needing calls
    assert summary["valid_tool_calls_pct"] == 100.0
    assert (summary["seconds_mean"], summary["seconds_median"]) == (2.0, 2.0)


def test_a_request_carries_the_rows_state_and_its_toolbox() -> None:
    compare = load_script("bench_serve_compare")
    row = CallExample.model_validate(
        {"message": "Pay it", "toolbox": "daily", "state": {"card": "visa"}}
    )
    [body] = compare.requests([row], {"daily": [TOOL]})
    assert body["tools"] == [TOOL] and body["tool_choice"] == "auto"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "visa" in body["messages"][0]["content"]


@pytest.mark.server
def test_the_script_runs_against_freyr_serve_on_a_fake(tmp_path: Path) -> None:
    compare = load_script("bench_serve_compare")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([TOOL]), encoding="utf-8")
    examples = tmp_path / "test.jsonl"
    examples.write_text(
        json.dumps(
            {
                "id": "w",
                "message": "get the weather in city=Oslo",
                "calls": [{"name": "get-weather", "arguments": {"city": "Oslo"}}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "cmp.json"
    argv = ["--model", "fake/rules", "--skip-llama-server", "--tools", str(tools)]
    assert compare.main([*argv, "--examples", str(examples), "--out", str(out)]) == 0
    summary = json.loads(out.read_text(encoding="utf-8"))["summaries"][
        "freyr serve --strategy freyr"
    ]
    assert summary["exact_pct"] == 100.0 and summary["valid_tool_calls_pct"] == 100.0
