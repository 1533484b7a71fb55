"""Strict, deterministic fake LMs for tests - shipped so users can test their own programs.

A fake plugs into DSPy as a custom engine, reads the role and the input fields out of the
prompt DSPy built, and answers through the active adapter's format, so parsing is exercised
for real. It is strict: a call its script does not cover raises ``FakeLMError`` with an
excerpt of the prompt. Two forms: ``ScriptedLM`` (a table) and ``FunctionLM`` (a callable).
``make_lm("fake/<name>")`` returns the fake registered under ``<name>``; ``fake/rules``
(``testing.rules``) is built in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy

from freyr_dspy.errors import UnknownModelError
from freyr_dspy.testing._engines import (
    Answer,
    FakeCall,
    FakeEngine,
    FunctionLM,
    ScriptedLM,
    format_outputs,
    read_call,
)
from freyr_dspy.testing._processes import free_port, stopped_at_exit

__all__ = [
    "Answer",
    "FakeCall",
    "FakeEngine",
    "FunctionLM",
    "ScriptedLM",
    "format_outputs",
    "free_port",
    "make_fake_lm",
    "read_call",
    "register_fake",
    "stopped_at_exit",
    "unregister_fake",
]

__test__ = False  # not a test module, whatever pytest's collection rules say

_FAKES: dict[str, Callable[[], FakeEngine]] = {}


def register_fake(name: str, fake: FakeEngine | Callable[[], FakeEngine]) -> None:
    """Make ``fake/<name>`` available to ``make_lm``.

    Pass an engine instance to share it (and its ``calls``) between every LM built from the
    name, or a factory to give each LM a fresh one.
    """
    if isinstance(fake, FakeEngine):
        instance = fake
        _FAKES[name] = lambda: instance
    else:
        _FAKES[name] = fake


def unregister_fake(name: str) -> None:
    """Remove ``fake/<name>`` (tests clean up after themselves)."""
    _FAKES.pop(name, None)


def make_fake_lm(model_id: str, *, cache: bool = False, **kwargs: Any) -> dspy.LM:
    """Build a ``dspy.LM`` over the fake registered as ``model_id`` (``fake/<name>``).

    Raises:
        UnknownModelError: when no fake is registered under that name.
    """
    name = model_id.split("/", 1)[1]
    _register_builtins()
    if name not in _FAKES:
        raise UnknownModelError(
            model_id,
            [f"fake/{n}" for n in _FAKES],
            hint="Register it with freyr_dspy.testing.register_fake().",
        )
    return dspy.LM(model_id, engine=_FAKES[name](), cache=cache, **kwargs)


def _register_builtins() -> None:
    if "rules" not in _FAKES:
        from freyr_dspy.testing._rules import RulesLM

        register_fake("rules", RulesLM)
