"""Narrowed schemas: what a retry's grammar may no longer write, or must choose from.

A retry after an error that blamed an argument (``strategies.retry.blame``) asks the
parameters role again under a narrower JSON schema, which the llama.cpp grammar enforces:
``forbid_values`` takes the blamed values out - a blamed enum member leaves the enum, a blamed
empty text gets ``minLength: 1``, and other blamed texts are excluded by a regex ``pattern``
built from them - and ``choose_from`` makes a text property an enum of the values the error
listed (``offered_choices`` says which a property can take).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from freyr_dspy.tools import map_subschemas

__all__ = [
    "LONGEST_EXCLUDED",
    "choose_from",
    "forbid_values",
    "offered_choices",
]


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


def offered_choices(schema: Any, listed: Sequence[str], refused: Sequence[Any]) -> list[str]:
    """The ``listed`` values a property of schema ``schema`` can be made to choose from.

    Refused values (the one the error blamed, those forbidden earlier) are not offered: an
    enum of them alone would make the model write them again. An existing enum offers only
    its listed members; a property that is not text offers nothing.
    """
    offered = [value for value in dict.fromkeys(listed) if value not in refused]
    if not isinstance(schema, dict):
        return []
    if isinstance(schema.get("enum"), list):
        return [value for value in offered if value in schema["enum"]]
    if schema.get("type") == "string":
        return offered
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return next((found for b in branches if (found := offered_choices(b, offered, ()))), [])


def choose_from(schema: dict[str, Any], choices: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The object schema ``schema`` with each text property in ``choices`` made an enum of them.

    An existing enum keeps only the members chosen (unchanged if none would be left); a
    property that is not text, or not in the schema, is left alone (``offered_choices``
    gives the values a property takes).
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not choices:
        return schema
    narrowed = {
        name: _one_of(sub, list(choices[name])) if choices.get(name) else sub
        for name, sub in properties.items()
    }
    return {**schema, "properties": narrowed}


def _one_of(schema: Any, values: list[str]) -> Any:
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("enum"), list):
        kept = [member for member in schema["enum"] if member in values]
        return {**schema, "enum": kept} if kept else schema
    if schema.get("type") == "string":
        kept_keys = {key: schema[key] for key in ("type", "title", "description") if key in schema}
        return {**kept_keys, "enum": values}  # a pattern or length of its own no longer applies
    if "anyOf" in schema or "oneOf" in schema:
        return map_subschemas(schema, lambda sub: _one_of(sub, values))
    return schema


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
