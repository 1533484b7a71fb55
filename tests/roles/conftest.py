"""Helpers for the per-role tests: run one role on a scripted fake under either adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy
import pytest

from freyr_dspy.roles import Role
from freyr_dspy.testing import Answer, ScriptedLM

RunRole = Callable[..., tuple[dspy.Prediction, ScriptedLM]]


@pytest.fixture(params=["json", "chat"])
def run_role(request: pytest.FixtureRequest) -> RunRole:
    """Call ``role_cls`` once with ``inputs`` while the fake answers ``answer`` to every call."""
    adapter = dspy.JSONAdapter() if request.param == "json" else dspy.ChatAdapter()

    def run(role_cls: type[Role], answer: Answer, **inputs: Any) -> tuple[Any, ScriptedLM]:
        role_id = next(name for name, cls in _roles().items() if cls is role_cls)
        engine = ScriptedLM({role_id: {"*": answer}})
        role = role_cls()
        role.set_lm(dspy.LM("fake/role", engine=engine, cache=False))
        with dspy.context(adapter=adapter):
            return role(**inputs), engine

    return run


def _roles() -> dict[str, type[Role]]:
    from freyr_dspy.roles import load_roles

    return load_roles()
