"""The shipped example suite (trainsets/calls): valid, varied, and test apart from train."""

from __future__ import annotations

from collections import Counter

from freyr_dspy.datasets import load_tools_file, read_rows
from freyr_dspy.datasets._replies import numbers_in
from tests.support.paths import TRAINSETS_DIR

SUITE = TRAINSETS_DIR / "calls"
CATEGORIES = {
    "one-call", "parallel", "choice", "no-tool-chat", "no-tool-near-miss", "partial", "reply",
    "values", "format", "language", "wording",
}  # fmt: skip


def test_the_suite_loads_checked_with_every_category_in_both_files() -> None:
    boxes = load_tools_file(SUITE / "tools.json")
    files = {name: read_rows(SUITE / f"{name}.jsonl", boxes) for name in ("train", "test")}
    assert len(boxes) >= 10 and sum(len(rows) for rows in files.values()) >= 326
    for rows in files.values():
        kinds = Counter(row.example.kind for row in rows)
        assert set(kinds) == CATEGORIES and min(kinds.values()) >= 6
        assert {row.example.toolbox for row in rows} == set(boxes)
    train = {row.example.message.casefold() for row in files["train"]}
    assert not train & {row.example.message.casefold() for row in files["test"]}


def test_parallel_rows_include_several_calls_of_one_tool() -> None:
    rows = read_rows(SUITE / "test.jsonl", load_tools_file(SUITE / "tools.json"))
    same_tool = [
        row
        for row in rows
        if row.example.kind == "parallel" and len({c.name for c in row.example.calls or []}) == 1
    ]
    assert len(same_tool) >= 10


def test_reply_rows_give_a_result_for_every_call_and_partial_rows_leave_an_ask_out() -> None:
    boxes = load_tools_file(SUITE / "tools.json")
    for name in ("train", "test"):
        rows = [row.example for row in read_rows(SUITE / f"{name}.jsonl", boxes)]
        replies = [row for row in rows if row.kind == "reply"]
        for row in replies:
            results = row.results or []
            assert row.calls and {c.name for c in row.calls} <= {r.name for r in results}, row.id
            # the numbers a reply may state come from the results (or the request)
            assert any(numbers_in(result.content) for result in results), row.id
        # every toolbox has a reply row in each file, so replies are not learnt on a few toolboxes
        assert {row.toolbox for row in replies} == set(boxes)
        # a partial request is one a tool answers in part: one call or more, never none
        assert all(row.calls for row in rows if row.kind == "partial")
        assert len(replies) >= 10 and any(" and " in row.message for row in replies)
        assert all(not row.results for row in rows if row.kind != "reply")
