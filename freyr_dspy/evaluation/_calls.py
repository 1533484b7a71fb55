"""Exact-call matching: did a program make exactly the expected tool calls, with their values?

A call matches when the tool name is the same and every expected argument has an equal value:
strings compare case-insensitively after trimming (a closing full stop aside), numbers
numerically (``21`` and ``"21.0"`` are equal, as a tool's validation would make them), lists
item by item, objects key by key under the same rules. An argument the call adds beyond the
expected ones is accepted only when it equals the tool's declared default (writing
``"currency": "EUR"`` when EUR is the default changes nothing) or is empty (null, "", [],
{}); any other extra value is a different call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from freyr_dspy.tools import Toolbox

__all__ = ["calls_match", "values_equal"]

#: ``{"name": ..., "arguments": {...}}``, as written in a test set.
ExpectedCall = Mapping[str, Any]


def calls_match(
    expected: Sequence[ExpectedCall],
    made: Sequence[tuple[str, Mapping[str, Any]]],
    toolbox: Toolbox,
) -> bool:
    """True when ``made`` is exactly ``expected``, in order (see module docstring)."""
    if len(expected) != len(made):
        return False
    return all(
        _call_matches(want, name, arguments, toolbox)
        for want, (name, arguments) in zip(expected, made, strict=True)
    )


def _call_matches(
    want: ExpectedCall, name: str, arguments: Mapping[str, Any], toolbox: Toolbox
) -> bool:
    if name != want["name"]:
        return False
    expected_args: Mapping[str, Any] = want.get("arguments", {})
    if not all(k in arguments and values_equal(v, arguments[k]) for k, v in expected_args.items()):
        return False
    defaults = _defaults(toolbox, name)
    extras = {k: v for k, v in arguments.items() if k not in expected_args and not _empty(v)}
    return all(k in defaults and values_equal(defaults[k], v) for k, v in extras.items())


def _empty(value: Any) -> bool:
    """No value at all: an optional argument written as null, "", [] or {} says nothing."""
    return value is None or (isinstance(value, str | list | dict) and not value)


def _defaults(toolbox: Toolbox, name: str) -> dict[str, Any]:
    """The declared defaults of a tool's optional parameters (none for an unknown tool)."""
    if name not in toolbox.names:
        return {}
    return {p.name: p.default for p in toolbox.get(name).parameters if not p.required}


def values_equal(expected: Any, got: Any) -> bool:
    """Equal under the module's rules: trimmed case-insensitive text, numeric numbers."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got or (
            isinstance(got, str) and got.strip().lower() == str(expected).lower()
        )
    if isinstance(expected, int | float):
        number = _as_number(got)
        return number is not None and math.isclose(number, float(expected), rel_tol=1e-9)
    if isinstance(expected, str):
        return isinstance(got, str | int | float) and _text(str(got)) == _text(expected)
    if isinstance(expected, Mapping):
        return (
            isinstance(got, Mapping)
            and set(got) == set(expected)
            and all(values_equal(v, got[k]) for k, v in expected.items())
        )
    if isinstance(expected, Sequence):
        return (
            isinstance(got, Sequence)
            and not isinstance(got, str)
            and len(got) == len(expected)
            and all(values_equal(e, g) for e, g in zip(expected, got, strict=True))
        )
    return bool(expected == got)


def _text(value: str) -> str:
    """Text as compared: trimmed, case-folded, without a closing full stop."""
    return value.strip().rstrip(".").strip().casefold()


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip())
    except ValueError:
        return None
