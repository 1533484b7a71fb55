"""Blamed values: a retry may not write again the value its error complained about.

A small model retried with the error as feedback mostly writes the same arguments again. On
LLMaker with Qwen2.5-Coder 0.5B, 17 of FREYR's 27 failing calls failed with the identical error
on all four attempts; the commonest, ``room_from should be provided (it is empty)``, came back
151 times. The tools are deterministic, so an attempt that repeats the value an error blamed
is wasted.

An argument is *blamed* when the error names its parameter as a word (``room_from should be
provided``) or quotes the value the model wrote (``there is no enemy named 'Gobbo'``).
``forbid_values`` then narrows the parameter's schema so that the llama.cpp grammar cannot
write the value again: a blamed enum member leaves the enum, a blamed empty text gets
``minLength: 1``, and other blamed texts are excluded by a regex ``pattern`` built from them.
Numbers, booleans and texts holding quotes or backslashes cannot be excluded this way;
``blame_note`` asks for a different value in the feedback, without repeating the value, since
a small model copies values from its feedback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from freyr_dspy.tools.schema import map_subschemas

__all__ = ["LONGEST_EXCLUDED", "blame_note", "blamed_arguments", "forbid_values"]


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

    Forbidden members leave an enum unless none would be left; a text schema (or the text
    branch of an ``anyOf``) gets ``minLength: 1`` for a forbidden ``""`` and a ``pattern``
    excluding other forbidden texts, unless it has a pattern or format of its own. Numbers
    and parameters the schema lacks are ignored.
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
    if schema.get("type") == "string":
        return _text_without(schema, [v for v in values if isinstance(v, str)])
    if "anyOf" in schema or "oneOf" in schema:
        return map_subschemas(schema, lambda sub: _without(sub, values))
    return schema


def _text_without(schema: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    own_pattern = "pattern" in schema or "format" in schema  # cannot be intersected with ours
    excludable = [] if own_pattern else [t for t in texts if _fits_a_pattern(t)]
    if any(excludable):  # the pattern excludes "" too when it is one of them
        return {**schema, "pattern": _pattern_without(excludable)}
    if "" in texts:
        return {**schema, "minLength": max(1, int(schema.get("minLength", 0)))}
    return schema


#: Longest blamed text the pattern excludes: the pattern grows with the square of its length.
LONGEST_EXCLUDED = 80


def _fits_a_pattern(text: str) -> bool:
    return len(text) <= LONGEST_EXCLUDED and '"' not in text and "\\" not in text


def _pattern_without(texts: list[str]) -> str:
    r"""A regex matching every JSON string content except ``texts``.

    Built on the trie of ``texts``: at each prefix, the string may end (unless the prefix is
    itself excluded), go on with a character no excluded text has there (then anything), or
    follow one of those characters. Written in the subset llama-cpp-python's converter
    translates correctly: literal letters, digits and spaces, and character classes with
    ``\xNN`` escapes (an escape outside a class is mistranslated).
    """
    trie: dict[str, Any] = {}
    for text in texts:
        node = trie
        for char in text:
            node = node.setdefault(char, {})
        node[_END] = {}
    return f"^{_node_pattern(trie)}$"


_END = ""  # the trie key marking an excluded text's end (no character is empty)
_TEXT_CHAR = '[^"\\\\]'  # any character a JSON string holds unescaped


def _node_pattern(node: dict[str, Any]) -> str:
    nexts = [char for char in node if char != _END]
    other = "".join(_class_char(char) for char in nexts)
    options = [f'[^"\\\\{other}]{_TEXT_CHAR}*']
    options += [_literal(char) + _node_pattern(node[char]) for char in nexts]
    group = f"({'|'.join(options)})"
    return group if _END in node else f"{group}?"


def _literal(char: str) -> str:
    return char if char.isalnum() or char == " " else f"[{_class_char(char)}]"


def _class_char(char: str) -> str:
    if char.isalnum() or char == " ":
        return char
    code = ord(char)
    return f"\\x{code:02X}" if code < 0x100 else f"\\u{code:04X}"
