"""``summary`` and ``chat``: one reply, unwrapped from fences, JSON and field markers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from freyr_dspy.roles import ChatResponder, Summarizer

RunRole = Callable[..., Any]  # the run_role fixture of tests/roles/conftest.py

SUMMARY_INPUTS = {
    "message": "add milk",
    "outcomes": "- add_task(title='milk'): Added.",
    "state": "Tasks: milk",
}
CHAT_INPUTS = {"conversation": "(none)", "message": "hi", "state": "empty"}


@pytest.mark.parametrize(
    ("role", "inputs"), [(Summarizer, SUMMARY_INPUTS), (ChatResponder, CHAT_INPUTS)]
)
def test_structured_reply(run_role: RunRole, role: type, inputs: dict) -> None:
    prediction, _ = run_role(role, {"reply": "```\nAdded milk.\n```"}, **inputs)
    assert prediction.reply == "Added milk."
    assert prediction.parsed_ok


@pytest.mark.parametrize(
    ("role", "inputs"), [(Summarizer, SUMMARY_INPUTS), (ChatResponder, CHAT_INPUTS)]
)
def test_prose_without_format_is_the_reply(run_role: RunRole, role: type, inputs: dict) -> None:
    prediction, _ = run_role(role, "  I added milk to your list!  ", **inputs)
    assert prediction.reply == "I added milk to your list!"
