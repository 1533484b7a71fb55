"""``fake/rules``: a keyword-rule fake agent, instant and deterministic.

It reads the catalog and the tool spec out of the prompt like a (very literal) model would:
a tool is an intent when every word of its name occurs in the message; an argument is
taken from ``name=value`` / ``name: value`` in the message, else from a quoted string (for
text parameters) or the first number (for numeric ones). It exists for demos, the CLI's
end-to-end tests and the overhead benchmark, where the LM must cost nothing.
"""

from __future__ import annotations

import re
from typing import Any

from freyr_dspy.testing._engines import Answer, FakeCall, FakeEngine

__all__ = ["RulesLM"]


class RulesLM(FakeEngine):
    """Answer every built-in role with keyword rules."""

    def answer(self, call: FakeCall) -> Answer:
        """Dispatch on the role recovered from the prompt."""
        message = call.inputs.get("message", "")
        if call.role == "intent":
            return {"intents": _intents(message, call.inputs.get("tools", ""))}
        if call.role == "parameters":
            return {"arguments": _arguments(message, call.inputs.get("tool", ""))}
        if call.role == "summary":
            first = call.inputs.get("outcomes", "").splitlines()[:1]
            return {"reply": "Done. " + " ".join(first)}
        if call.role == "chat":
            return {"reply": "Hello! Tell me what you would like to do."}
        return {name: "" for name in ("reply",)}


def _catalog_names(catalog: str) -> list[str]:
    return re.findall(r"^\s*-\s*([\w.-]+)", catalog, re.M)


def _intents(message: str, catalog: str) -> list[str]:
    words = set(re.findall(r"[a-z0-9]+", message.lower()))
    stems = {w.rstrip("s") for w in words}
    chosen = []
    for name in _catalog_names(catalog):
        parts = [p for p in re.split(r"[_\W]+", name.lower()) if p]
        if name != "conversation" and parts and all(p.rstrip("s") in stems for p in parts):
            chosen.append(name)
    return chosen or ["conversation"]


def _arguments(message: str, spec: str) -> dict[str, Any]:
    params = re.findall(r"^\s+-\s*(\w+)\s*\((\w+)", spec, re.M)
    arguments: dict[str, Any] = {}
    for name, kind in params:
        value = _explicit(message, name) or _implicit(message, kind)
        if value is not None:
            arguments[name] = value
    return arguments


def _explicit(message: str, name: str) -> str | None:
    match = re.search(rf"\b{name}\s*[=:]\s*(\"[^\"]*\"|'[^']*'|[\w.-]+)", message, re.I)
    return match.group(1).strip("'\"") if match else None


def _implicit(message: str, kind: str) -> Any:
    if kind in {"integer", "number"}:
        match = re.search(r"-?\d+(?:\.\d+)?", message)
        return match.group(0) if match else None
    quoted = re.search(r"[\"']([^\"']+)[\"']", message)
    if quoted:
        return quoted.group(1)
    called = re.search(r"\b(?:called|named|titled)\s+(.+?)(?:\s+with\b|[.,;!?]|$)", message, re.I)
    return called.group(1) if called else None
