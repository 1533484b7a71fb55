"""``intent``: typed list output, and a tolerant read of text the adapter cannot parse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from freyr_dspy.roles import IntentClassifier

RunRole = Callable[..., Any]  # the run_role fixture of tests/roles/conftest.py

INPUTS = {
    "conversation": "(none)",
    "message": "add milk",
    "tools": "- add_task: Add a task.",
    "state": "empty",
}


def test_structured_answer(run_role: RunRole) -> None:
    prediction, engine = run_role(
        IntentClassifier, {"intents": ["add_task", "list_tasks"]}, **INPUTS
    )
    assert prediction.intents == ["add_task", "list_tasks"]
    assert prediction.parsed_ok
    assert engine.roles_called()[0] == "intent"


def test_one_joined_item_is_split(run_role: RunRole) -> None:
    prediction, _ = run_role(IntentClassifier, {"intents": ["add_task, list_tasks"]}, **INPUTS)
    assert prediction.intents == ["add_task", "list_tasks"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("I would use:\n- add_task\n- list_tasks", ["I would use:", "add_task", "list_tasks"]),
        ("add_task, list_tasks", ["add_task", "list_tasks"]),
        ("", []),
    ],
)
def test_unparseable_text_falls_back_to_the_tolerant_parser(
    run_role: RunRole, raw: str, expected: list[str]
) -> None:
    prediction, engine = run_role(IntentClassifier, raw, **INPUTS)
    assert not prediction.parsed_ok
    assert prediction.intents == expected
    assert set(engine.roles_called()) == {"intent"}
