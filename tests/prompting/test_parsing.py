"""Tolerant parsers on the malformed output small models really write."""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.prompting._parsing import (
    match_names,
    parse_arguments,
    parse_text,
    split_items,
    strip_fences,
)

TOOLS = ["add_task", "list_tasks", "complete_task", "remove_task"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("add_task, list_tasks", ["add_task", "list_tasks"]),
        ("ADD_TASK", ["add_task"]),
        ("  add_task  ,   list_tasks ", ["add_task", "list_tasks"]),
        ("- add_task\n- list_tasks", ["add_task", "list_tasks"]),
        ("1. add task\n2) list-tasks", ["add_task", "list_tasks"]),
        ("* `add_task`\n* `complete_task`", ["add_task", "complete_task"]),
        ("• add_task", ["add_task"]),
        ("**add_task**", ["add_task"]),
        ("'add_task'", ["add_task"]),
        ('"add_task"', ["add_task"]),
        ("```\nadd_task\n```", ["add_task"]),
        ('```json\n["add_task", "list_tasks"]\n```', ["add_task", "list_tasks"]),
        ("[add_task, list_tasks]", ["add_task", "list_tasks"]),
        ('["add_task", "list_tasks"', ["add_task", "list_tasks"]),  # unterminated JSON
        ('{"intents": ["add_task", "remove_task"]}', ["add_task", "remove_task"]),
        ("add_task; remove_task", ["add_task", "remove_task"]),
        ("Intents: add_task and list_tasks", ["add_task", "list_tasks"]),
        ("I think you should call add_task.", ["add_task"]),
        ("add_task\nlist_tasks\n", ["add_task", "list_tasks"]),
        ("Conversation.", ["conversation"]),
        (["add_task, list_tasks"], ["add_task", "list_tasks"]),  # a list with one joined item
    ],
)
def test_intent_lists(written: Any, expected: list[str]) -> None:
    matched, unknown = match_names(split_items(written), TOOLS)
    assert matched == expected
    assert unknown == []


@pytest.mark.parametrize("empty", ["", "   ", None, [], "[]", "```\n```"])
def test_empty_lists(empty: Any) -> None:
    assert split_items(empty) == []


def test_unknown_names_are_returned_not_dropped() -> None:
    matched, unknown = match_names(split_items("add_task, fly_to_moon, None"), TOOLS)
    assert matched == ["add_task"]
    assert unknown == ["fly_to_moon", "None"]


def test_repeats_dropped_unless_kept() -> None:
    items = split_items("add_task, list_tasks, ADD TASK")
    assert match_names(items, TOOLS)[0] == ["add_task", "list_tasks"]
    assert match_names(items, TOOLS, keep_repeats=True)[0] == ["add_task", "list_tasks", "add_task"]


def test_ambiguous_prose_matches_nothing() -> None:
    # two unrelated tool names in one item: the parser does not guess
    matched, unknown = match_names(["add_task or remove_task"], TOOLS)
    assert matched == [] and unknown == ["add_task or remove_task"]
    # nested names keep the longest ("task" is inside "add_task")
    assert match_names(["please add_task"], ["task", "add_task"])[0] == ["add_task"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ({"title": "x"}, {"title": "x"}),
        ({"arguments": {"title": "x"}}, {"title": "x"}),
        ({"arguments": '{"title": "x"}'}, {"title": "x"}),
        ('{"title": "x", "priority": 2}', {"title": "x", "priority": 2}),
        ('```json\n{"title": "x"}\n```', {"title": "x"}),
        ('Here you go: {"title": "x", "priority": 2} hope it helps', {"title": "x", "priority": 2}),
        ('{"title": "x", "priority": 2', {"title": "x", "priority": 2}),  # broken JSON
        ("{'title': 'x'}", {"title": "x"}),  # Python quotes
        ('{"arguments": {"title": "x"}}', {"title": "x"}),
        ('{"title": "say {hi}"}', {"title": "say {hi}"}),
        ("- title: buy milk\n- priority: 2", {"title": "buy milk", "priority": 2}),
        ("title = 'buy milk'\npriority=3", {"title": "buy milk", "priority": 3}),
        ('* `title`: "buy milk"\n* priority: 2,', {"title": "buy milk", "priority": 2}),
        ("1. title: buy milk", {"title": "buy milk"}),
        ("- title: buy milk: 2 litres", {"title": "buy milk: 2 litres"}),
        ("```\n- title: x\n```", {"title": "x"}),
        ("Sure!\n- title: x\nThat is all.", {"title": "x"}),
        (
            '- done: true\n- tags: ["a", "b"]\n- ratio: 0.5\n- none: null',
            {"done": True, "tags": ["a", "b"], "ratio": 0.5, "none": None},
        ),
    ],
)
def test_arguments(written: Any, expected: dict[str, Any]) -> None:
    assert parse_arguments(written) == expected


@pytest.mark.parametrize("nothing", ["", None, "I don't know", "{}", "```\n```"])
def test_no_arguments_is_an_empty_dict(nothing: Any) -> None:
    assert parse_arguments(nothing) == {}


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Hello", "Hello"),
        ("  spaced  ", "spaced"),
        ("```\nHi there\n```", "Hi there"),
        ('{"reply": "Done!"}', "Done!"),
        ("[[ ## reply ## ]]\nDone.\n\n[[ ## completed ## ]]", "Done."),
        ("", ""),
        (None, ""),
        ('{"reply": ', ""),
    ],
)
def test_text(written: Any, expected: str) -> None:
    assert parse_text(written) == expected


def test_strip_fences_keeps_unfenced_text() -> None:
    assert strip_fences("no fence ") == "no fence"
    assert strip_fences("prose\n```python\ncode\n```\nmore") == "code"
