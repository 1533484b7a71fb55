"""The dataset format: rows are read, defaulted and refused with ``path:line`` in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from freyr_dspy.datasets import AnyOf, load_examples, read_rows
from freyr_dspy.errors import DataError
from freyr_dspy.tools import Toolbox
from tests.support.dataset_helpers import write_rows


def test_rows_read_with_defaults_and_alternatives(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "ex.jsonl",
        [
            {
                "message": "Weather in Oslo?",
                "calls": [
                    {
                        "name": "get-weather",
                        "arguments": {"city": "Oslo", "unit": {"any_of": ["celsius", None]}},
                    }
                ],
            },
            "",
            {"message": "hi", "calls": []},
            {"message": "two cities", "calls": [{"name": "a"}, {"name": "b"}], "ordered": True},
            {"message": "no gold yet"},
        ],
    )
    first, chat, multi, raw = load_examples(path)
    assert (first.id, chat.id) == ("ex-1", "ex-3")  # ids from the line numbers
    unit = first.calls[0].arguments["unit"]
    assert isinstance(unit, AnyOf) and unit.optional and unit.values == ["celsius"]
    assert first.calls[0].plain_arguments() == {"city": "Oslo"}
    assert [first.kind, chat.kind, multi.kind, raw.kind] == [
        "one-call",
        "no-tool",
        "multi-call",
        "unlabelled",
    ]
    assert not raw.labelled and chat.labelled


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "ex.jsonl:2: invalid JSON"),
        ('["a list"]', "ex.jsonl:2: expected a JSON object, got list"),
        ('{"message": ""}', "ex.jsonl:2: message: String should have at least 1 character"),
        (
            '{"message": "x", "calls": [{"arguments": {}}]}',
            "ex.jsonl:2: calls.0.name: Field required",
        ),
        ('{"message": "x", "cals": []}', "ex.jsonl:2: cals: unknown field"),
        (
            '{"message": "x", "calls": [{"name": "a", "arguments": {"u": {"any_of": []}}}]}',
            "ex.jsonl:2: calls.0.arguments: argument 'u': any_of needs a non-empty list",
        ),
        ('{"id": "ex-1", "message": "x"}', "ex.jsonl:2: duplicate id 'ex-1' (first on line 1)"),
    ],
)
def test_a_bad_row_is_one_line_with_its_line_number(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write_rows(tmp_path / "ex.jsonl", [{"message": "fine", "calls": []}, line])
    with pytest.raises(DataError) as caught:
        load_examples(path)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_missing_and_empty_files_are_data_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read examples"):
        load_examples(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no examples"):
        load_examples(tmp_path / "empty.jsonl")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"message": "x", "calls": [{"name": "get-wether", "arguments": {"city": "Oslo"}}]},
            "ex.jsonl:1: calls.0: unknown tool 'get-wether'; the toolbox has get-weather, "
            "tag_photos. Did you mean 'get-weather'?",
        ),
        (
            {"message": "x", "calls": [{"name": "get-weather", "arguments": {}}]},
            "ex.jsonl:1: calls.0: gold call does not fit the tool's schema",
        ),
        (
            {
                "message": "x",
                "calls": [
                    {
                        "name": "get-weather",
                        "arguments": {"city": "Oslo", "unit": {"any_of": ["celsius", "kelvin"]}},
                    }
                ],
            },
            "kelvin",
        ),
        (
            {
                "message": "x",
                "calls": [{"name": "get-weather", "arguments": {"city": "O", "x": 1}}],
            },
            "unexpected argument 'x'",
        ),
        ({"message": "x"}, "ex.jsonl:1: no calls: label the row"),
        ({"message": "x", "toolbox": "office", "calls": []}, "unknown toolbox 'office'"),
    ],
)
def test_gold_calls_are_checked_against_the_tools(
    tmp_path: Path,
    box: Toolbox,
    row: dict,
    message: str,  # type: ignore[type-arg]
) -> None:
    path = write_rows(tmp_path / "ex.jsonl", [row])
    with pytest.raises(DataError) as caught:
        read_rows(path, {"default": box})
    assert message in str(caught.value)


def test_a_row_may_bring_its_own_tools(tmp_path: Path, box: Toolbox) -> None:
    own = [
        {
            "name": "ping",
            "description": "Ping a host.",
            "parameters": {
                "type": "object",
                "properties": {"host": {"type": "string"}},
                "required": ["host"],
            },
        }
    ]
    path = write_rows(
        tmp_path / "ex.jsonl",
        [
            {
                "message": "ping example.org",
                "tools": own,
                "calls": [{"name": "ping", "arguments": {"host": "example.org"}}],
            },
            {"message": "Oslo?", "calls": [{"name": "GET-WEATHER", "arguments": {"city": "Oslo"}}]},
        ],
    )
    own_row, shared_row = read_rows(path, {"default": box})
    assert own_row.toolbox.names == ["ping"] and shared_row.toolbox is box
    assert shared_row.example.calls[0].name == "get-weather"  # the tool's own spelling
