"""Blamed values: a retry may not write again the value its error complained about.

A small model retried with the error as feedback mostly writes the same arguments again. On
LLMaker with Qwen2.5-Coder 0.5B, 17 of FREYR's 27 failing calls failed with the identical error
on all four attempts; the commonest, ``room_from should be provided (it is empty)``, came back
151 times. The tools are deterministic, so an attempt that repeats the value an error blamed
is wasted.

An argument is *blamed* when the error names its parameter as a word (``room_from should be
provided``) or quotes the value the model wrote (``there is no enemy named 'Gobbo'``).
``forbid_values`` then narrows the parameter's schema where JSON schema can say "not this" in
a form the llama.cpp grammar keeps: a blamed empty text gets ``minLength: 1``, a blamed enum
member leaves the enum. Any other blamed value (a wrong name, a number) cannot be excluded
by the grammar; ``blame_note`` asks for a different one in the feedback, without repeating
the value, since a small model copies values from its feedback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from freyr_dspy.tools.schema import map_subschemas

__all__ = ["blame_note", "blamed_arguments", "forbid_values"]


def blamed_arguments(arguments: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The arguments ``error`` blames: its parameter named as a word, or its text quoted.

    >>> blamed_arguments({"room_from": "", "name": "Hall"}, "room_from should be provided")
    {'room_from': ''}
    >>> blamed_arguments({"enemy": "Gobbo", "room": "Hall"}, "no enemy named 'Gobbo' in Hall")
    {'enemy': 'Gobbo'}
    """
    return {
        name: value
        for name, value in arguments.items()
        if _names_parameter(error, name) or _quotes_value(error, value)
    }


def forbid_values(schema: dict[str, Any], forbidden: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The object schema ``schema`` with each property unable to take its forbidden values.

    Only what a grammar can enforce is changed: a forbidden ``""`` makes a text schema (or the
    text branch of an ``anyOf``) at least one character long, and forbidden members leave an
    enum unless none would be left. Other values, and parameters the schema lacks, are ignored.
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not forbidden:
        return schema
    narrowed = {
        name: _without(sub, forbidden[name]) if name in forbidden else sub
        for name, sub in properties.items()
    }
    return {**schema, "properties": narrowed}


def blame_note(blamed: Mapping[str, Any]) -> str:
    """The feedback line asking for other values of the blamed parameters ('' if none)."""
    if not blamed:
        return ""
    names = ", ".join(blamed)
    return f"The error is about {names}: write a different value for {names}, not the same one."


def _names_parameter(error: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", error) is not None


def _quotes_value(error: str, value: Any) -> bool:
    if not isinstance(value, str) or not value.strip():
        return False  # an empty text is blamed only through its parameter's name
    return any(f"{open_}{value}{close}" in error for open_, close in _QUOTES)


#: Quote pairs an error may put around a value the model wrote.
_QUOTES = (("'", "'"), ('"', '"'), ("`", "`"), ("“", "”"), ("‘", "’"))


def _without(schema: Any, values: Sequence[Any]) -> Any:
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("enum"), list):
        kept = [member for member in schema["enum"] if member not in values]
        return {**schema, "enum": kept} if kept else schema
    if schema.get("type") == "string" and "" in values:
        return {**schema, "minLength": max(1, int(schema.get("minLength", 0)))}
    if "anyOf" in schema or "oneOf" in schema:
        return map_subschemas(schema, lambda sub: _without(sub, values))
    return schema
