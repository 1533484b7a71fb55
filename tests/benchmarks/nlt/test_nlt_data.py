"""Loading NLT scenario files, alternative descriptions and trainsets, with precise errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.benchmarks.nlt._data import (
    function_name,
    load_scenario,
    load_trainset,
    scenario_path,
    with_tool_descriptions,
)
from freyr_dspy.benchmarks.nlt._domain import make_toolbox
from freyr_dspy.errors import ConfigError, DataError

SCENARIO: dict[str, Any] = {
    "scenario": "mini",
    "source": "test fixture",
    "tools": [
        {"name": "Past Purchases", "description": "orders and receipts"},
        {"name": "Talk to a Human", "description": "reach a live agent"},
    ],
    "prompts": {"nlt": "Assess: Past Purchases, Talk to a Human.", "structured": "Call check_*."},
    "inputs": [
        {"id": 1, "message": "where is my order?", "expected_tools": ["Past Purchases"]},
        {"id": 2, "message": "nice show!", "expected_tools": []},
    ],
}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_loads_any_scenario_in_the_format(tmp_path: Path) -> None:
    path = write(tmp_path / "nlt" / "mini.json", SCENARIO)
    assert scenario_path(tmp_path, "mini") == path
    scenario = load_scenario(path)
    assert scenario.tool_names == ["Past Purchases", "Talk to a Human"]
    assert scenario.inputs[0].expected_tools == ["Past Purchases"]


def test_missing_scenario_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--data DIR"):
        scenario_path(tmp_path, "alex")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"inputs": [{"id": 1, "message": "x", "expected_tools": ["Refunds"]}]},
            "unknown expected",
        ),
        ({"tools": [{"name": "A"}, {"name": "A"}]}, "duplicate tool names: A"),
        ({"tools": []}, "tools"),
        ({"inputs": [{"id": 1, "message": ""}]}, "inputs.0.message"),
    ],
)
def test_invalid_scenarios_are_data_errors(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = write(tmp_path / "bad.json", {**SCENARIO, **change})
    with pytest.raises(DataError, match=message) as info:
        load_scenario(path)
    assert str(info.value).startswith(str(path))


def test_broken_json_reports_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '{\n"scenario": "x",\n"tools": [\n')
    with pytest.raises(DataError, match=r"bad\.json:4: invalid JSON"):
        load_scenario(path)


def test_alternative_descriptions_replace_only_the_named_tools(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path / "s.json", SCENARIO))
    alt = write(
        tmp_path / "alt.json",
        {"tools": [{"name": "Talk to a Human", "description": "a person, not a bot"}]},
    )
    changed = with_tool_descriptions(scenario, alt)
    assert [t.description for t in changed.tools] == ["orders and receipts", "a person, not a bot"]
    as_list = write(
        tmp_path / "alt2.json", [{"name": "Past Purchases", "description": "old orders"}]
    )
    assert with_tool_descriptions(scenario, as_list).tools[0].description == "old orders"


@pytest.mark.parametrize(
    "content",
    [
        {"tools": [{"name": "Refunds", "description": "x"}]},
        {"tools": []},
        {"tools": [{"x": 1}]},
    ],
)
def test_bad_alternative_descriptions(tmp_path: Path, content: Any) -> None:
    scenario = load_scenario(write(tmp_path / "s.json", SCENARIO))
    with pytest.raises(DataError, match=r"alt\.json"):
        with_tool_descriptions(scenario, write(tmp_path / "alt.json", content))


def test_function_names_and_toolboxes(tmp_path: Path) -> None:
    assert function_name("Recap of previous conversation") == "check_recap_of_previous_conversation"
    assert function_name("Sage Website Information") == "check_sage_website_information"
    scenario = load_scenario(write(tmp_path / "s.json", SCENARIO))
    topics = make_toolbox(scenario)
    functions = make_toolbox(scenario, "function")
    assert topics.names == ["Past Purchases", "Talk to a Human"]
    assert functions.names == ["check_past_purchases", "check_talk_to_a_human"]
    tool = functions.get("check_past_purchases")
    assert tool.parameters == () and tool.func is None
    assert tool.description == "For Past Purchases (orders and receipts)"
    assert functions.execute("check_past_purchases", {}).outcome.ok


TRAIN_OK = '{"id": "a", "message": "my receipt please", "expected_tools": ["Past Purchases"]}'


@pytest.mark.parametrize(
    ("second_line", "message"),
    [
        ("{not json", r"t\.jsonl:3: "),
        (
            '{"id": "b", "message": "x", "expected_tools": ["Refunds"]}',
            r"t\.jsonl:3: unknown tools",
        ),
        ('{"id": "a", "message": "again"}', r"t\.jsonl:3: duplicate id 'a'"),
        ('{"id": "b", "message": "x", "tools": []}', r"t\.jsonl:3: tools"),
        ('{"id": "b", "message": ""}', r"t\.jsonl:3: message"),
    ],
)
def test_trainset_errors_carry_path_and_line(
    tmp_path: Path, second_line: str, message: str
) -> None:
    path = write(tmp_path / "t.jsonl", f"{TRAIN_OK}\n\n{second_line}\n")
    with pytest.raises(DataError, match=message):
        load_trainset(path, ["Past Purchases", "Talk to a Human"])


def test_trainset_rows_may_name_tools_by_position(tmp_path: Path) -> None:
    row = '{"id": "a", "message": "talk to {{name:0}}", "expected_tools": ["{{name:1}}"]}'
    path = write(tmp_path / "t.jsonl", row + "\n")
    (loaded,) = load_trainset(path, ["Past Purchases", 'Talk to a "Human"'])
    assert loaded.expected_tools == ['Talk to a "Human"']
    assert loaded.message == "talk to Past Purchases"


@pytest.mark.parametrize(
    ("tool_names", "message"),
    [(None, r"t\.jsonl:1: .*by position"), (["Past Purchases"], r"t\.jsonl:1: .*past the catalog")],
)
def test_trainset_reference_errors_carry_path_and_line(
    tmp_path: Path, tool_names: list[str] | None, message: str
) -> None:
    path = write(
        tmp_path / "t.jsonl", '{"id": "a", "message": "x", "expected_tools": ["{{name:1}}"]}\n'
    )
    with pytest.raises(DataError, match=message):
        load_trainset(path, tool_names)


def test_trainset_loads_rows(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", TRAIN_OK + "\n")
    rows = load_trainset(path, ["Past Purchases"])
    assert [(r.id, r.expected_tools) for r in rows] == [("a", ["Past Purchases"])]
    with pytest.raises(DataError, match="trainset file not found"):
        load_trainset(tmp_path / "missing.jsonl")
