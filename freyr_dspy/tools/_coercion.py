"""Lenient reading of model-written arguments against a JSON schema, before it is validated.

Small models write ``"5"`` for 5, ``"Open"`` for ``open``, ``"true"`` for true, a JSON list
inside a string, ``Title`` for ``title``, or ``null`` for an optional argument they mean to
leave out. ``coerce`` turns such values into what the schema asks for, at any depth, and leaves
what it cannot read unchanged for the validator to report. Nothing is ever evaluated.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from freyr_dspy.tools._schema import schema_types

__all__ = ["coerce", "match_choice", "match_names"]

_NO = object()  # "cannot convert": the value goes on unchanged and fails validation
_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


def coerce(value: Any, schema: Any) -> Any:
    """Return ``value`` read as the (ref-free) ``schema`` asks, where that is unambiguous.

    Args:
        value: what the model wrote (already parsed from JSON).
        schema: the JSON schema of that value, with ``$ref``s inlined.

    Returns:
        The value with convertible leaves converted, argument names and choices matched.
    """
    if not isinstance(schema, Mapping):
        return value
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return _coerce_union(value, branches)
    if isinstance(schema.get("enum"), list):
        return match_choice(value, schema["enum"])
    types = schema_types(schema)
    if types and not any(_fits(value, t) for t in types):
        value = next((v for t in types if (v := _convert(value, t)) is not _NO), value)
    if isinstance(value, dict):
        return _coerce_object(value, schema)
    if isinstance(value, list):
        return _coerce_array(value, schema)
    return value


def match_choice(value: Any, choices: Sequence[Any]) -> Any:
    """Map a written choice onto the declared one it spells ("2" -> 2, "Open" -> "open")."""
    if value in choices:
        return value
    written = str(value).strip().strip("'\"").lower()
    return next((choice for choice in choices if str(choice).lower() == written), value)


def match_names(arguments: Mapping[str, Any], known: Collection[str]) -> dict[str, Any]:
    """Rename written argument names that spell a parameter differently ("Title" -> "title")."""
    keys = {_name_key(name): name for name in known}
    renamed: dict[str, Any] = {}
    for name, value in arguments.items():
        target = name if name in known else keys.get(_name_key(str(name)), name)
        # A second spelling of a parameter already given stays unknown, so it is reported.
        renamed[name if target in renamed or target in arguments else target] = value
    return renamed


def _name_key(name: str) -> str:
    return re.sub(r"[\s_\-`'\"]+", "", name).lower()


def _coerce_union(value: Any, branches: list[Any]) -> Any:
    for branch in branches:  # a value that already fits a branch is read as that branch
        if _fits_schema(value, branch):
            return coerce(value, branch)
    for branch in branches:
        converted = coerce(value, branch)
        if _fits_schema(converted, branch):
            return converted
    return value


def _coerce_object(value: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = set(schema.get("required") or ())
    extra = schema.get("additionalProperties")
    result: dict[str, Any] = {}
    for key, item in match_names(value, properties).items():
        sub = properties.get(key, extra)
        if item is None and key in properties and key not in required:
            if not _fits_schema(None, sub):
                continue  # a model's null for an optional argument means "leave it out"
        result[key] = coerce(item, sub)
    return result


def _coerce_array(value: list[Any], schema: Mapping[str, Any]) -> list[Any]:
    items, prefix = schema.get("items"), schema.get("prefixItems")
    positional = prefix if isinstance(prefix, list) else items if isinstance(items, list) else []
    rest = items if isinstance(items, Mapping) else None
    return [coerce(v, positional[i] if i < len(positional) else rest) for i, v in enumerate(value)]


def _fits_schema(value: Any, schema: Any) -> bool:
    """Whether a value has a type (or choice) the schema allows; nested parts not checked."""
    if not isinstance(schema, Mapping):
        return True
    if isinstance(schema.get("enum"), list):
        return value in schema["enum"]
    types = schema_types(schema)
    return not types or any(_fits(value, t) for t in types)


def _fits(value: Any, json_type: str) -> bool:
    if json_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if json_type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    kinds = {"string": str, "boolean": bool, "array": list, "object": dict, "null": type(None)}
    return isinstance(value, kinds.get(json_type, object))


def _convert(value: Any, json_type: str) -> Any:
    converter = _CONVERTERS.get(json_type)
    return converter(value) if converter else _NO


def _to_number(value: Any) -> Any:
    if not isinstance(value, str):
        return _NO
    try:
        number = float(value.strip())
    except ValueError:
        return _NO
    return number if math.isfinite(number) else _NO


def _to_integer(value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    number = value if isinstance(value, float) else _to_number(value)
    return int(number) if isinstance(number, float) and number.is_integer() else _NO


def _to_string(value: Any) -> Any:
    # Small models often write 5 for a text field; "5" is what they meant.
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else _NO


def _to_boolean(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return _NO


def _from_json(kind: type) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        if isinstance(value, tuple) and kind is list:
            return list(value)
        if not isinstance(value, str):
            return _NO
        try:
            parsed = json.loads(value)
        except ValueError:
            return _NO
        return parsed if isinstance(parsed, kind) else _NO

    return convert


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "integer": _to_integer,
    "number": _to_number,
    "string": _to_string,
    "boolean": _to_boolean,
    "array": _from_json(list),
    "object": _from_json(dict),
}
