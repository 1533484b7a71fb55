"""``parameters``: a dict of arguments, read from JSON, broken JSON or bullet lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from freyr_dspy.roles import ParameterFiller

RunRole = Callable[..., Any]  # the run_role fixture of tests/roles/conftest.py

INPUTS = {
    "conversation": "(none)",
    "message": "add milk",
    "state": "empty",
    "tool": "- add_task: Add.\n    - title (string, required)",
    "feedback": "none",
}


def test_structured_answer(run_role: RunRole) -> None:
    prediction, _ = run_role(
        ParameterFiller, {"arguments": {"title": "milk", "priority": 2}}, **INPUTS
    )
    assert prediction.arguments == {"title": "milk", "priority": 2}
    assert prediction.parsed_ok


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("- title: milk\n- priority: 2", {"title": "milk", "priority": 2}),
        ("Here: {'title': 'milk', 'priority': 2", {"title": "milk", "priority": 2}),
        ("no idea", {}),
    ],
)
def test_unparseable_text_falls_back(run_role: RunRole, raw: str, expected: dict) -> None:
    prediction, _ = run_role(ParameterFiller, raw, **INPUTS)
    assert not prediction.parsed_ok
    assert prediction.arguments == expected
