"""JSON Schema of tool arguments: check what users bring, read parameters and shapes from it.

Schemas come from OpenAI tool dicts, MCP servers and ``dspy.Tool``. They are kept whole (nested
objects, arrays, ``$defs``), so ``Tool.json_schema()`` gives back what was given. Type names
people write by habit (``str``, ``int``, ``float``, ``dict``, ``list``, ``tuple``, ``bool``,
``any``) are mapped to JSON Schema types first, because a validator would reject them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator, SchemaError, validators

from freyr_dspy.errors import ConfigError
from freyr_dspy.tools._parameter import ToolParameter

__all__ = [
    "argument_path",
    "describe_type",
    "inline_refs",
    "map_subschemas",
    "normalize_schema",
    "parameters_from_schema",
    "schema_types",
    "subschemas",
]

JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")

#: Habitual type names -> JSON Schema types; ``None`` means any value (the type is dropped).
TYPE_ALIASES: dict[str, str | None] = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "none": "null",
    "any": None,
}

# Keywords whose value is a subschema, a list of subschemas, or a map of name -> subschema.
_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")

#: Longest chain of ``$ref``s to ``$ref``s followed before giving up.
_MAX_DEPTH = 8
#: How often one ``$ref`` is inlined inside itself (a recursive schema) before it is cut.
_REPEATS = 2


def normalize_schema(name: str, parameters: Any) -> dict[str, Any]:
    """Return a checked copy of a tool's ``parameters`` schema with standard type names.

    Args:
        name: the tool's name, for error messages.
        parameters: a JSON Schema object (``{"type": "object", "properties": {...}}``) or None
            for a tool without arguments.

    Returns:
        The schema as given, with ``type``, ``properties`` and ``required`` filled in when absent.

    Raises:
        ConfigError: in one line naming the tool, where the problem is and what was expected.
    """
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, Mapping):
        kind = type(parameters).__name__
        raise ConfigError(f"tool {name!r}: parameters must be a JSON schema object, got {kind}")
    schema = _standard_types(copy.deepcopy(dict(parameters)), name, "parameters")
    if schema.setdefault("type", "object") != "object":
        raise ConfigError(
            f"tool {name!r}: parameters must have type 'object', got {schema['type']!r}"
        )
    properties = schema.setdefault("properties", {})
    required = schema.setdefault("required", [])
    if not isinstance(properties, dict):
        raise ConfigError(f"tool {name!r}: parameters.properties must be an object")
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ConfigError(f"tool {name!r}: parameters.required must be a list of names")
    if missing := [r for r in required if r not in properties]:
        raise ConfigError(
            f"tool {name!r}: required arguments {', '.join(map(repr, missing))} are not in "
            f"parameters.properties ({', '.join(properties) or 'none'})"
        )
    _check(name, schema)
    return schema


def _check(name: str, schema: dict[str, Any]) -> None:
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "the top"
        raise ConfigError(f"tool {name!r}: invalid JSON schema at {where}: {exc.message}") from exc


def _standard_types(node: Any, name: str, where: str) -> Any:
    """Map habitual type names to JSON Schema types everywhere in a schema, in place."""
    if not isinstance(node, dict):
        return node
    if "type" in node:
        standard = _type_name(node["type"], name, f"{where}.type")
        if standard is None:
            del node["type"]
        else:
            node["type"] = standard
    for key in _ONE:
        if isinstance(node.get(key), dict):
            _standard_types(node[key], name, f"{where}.{key}")
    for key in _MANY:
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                _standard_types(sub, name, f"{where}.{key}[{i}]")
    for key in _MAP:
        if isinstance(node.get(key), dict):
            for sub_name, sub in node[key].items():
                _standard_types(sub, name, f"{where}.{key}.{sub_name}")
    return node


def _type_name(value: Any, name: str, where: str) -> str | list[str] | None:
    if isinstance(value, list):
        names = [_type_name(v, name, where) for v in value]
        return None if None in names else [n for n in names if isinstance(n, str)]
    text = value.strip().lower() if isinstance(value, str) else None
    if text in JSON_TYPES:
        return text
    if text in TYPE_ALIASES:
        return TYPE_ALIASES[text]
    raise ConfigError(
        f"tool {name!r}: unknown type {value!r} at {where}; expected one of "
        f"{', '.join(JSON_TYPES)} (or {', '.join(TYPE_ALIASES)})"
    )


def argument_path(parts: Iterable[str | int]) -> str:
    """Name a nested argument the way a model reads it: ``items[0].qty``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """Follow a local ``$ref`` (``#/$defs/Item``); keywords beside the ``$ref`` win."""
    for _ in range(_MAX_DEPTH):
        target = _target(schema, root)
        if target is None:
            return schema
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _target(schema: Any, root: Mapping[str, Any]) -> dict[str, Any] | None:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    target: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        key = part.replace("~1", "/").replace("~0", "~")
        target = target.get(key) if isinstance(target, dict) else None
    return target if isinstance(target, dict) else None


def inline_refs(schema: Any, root: Mapping[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """Return a copy of ``schema`` with local ``$ref``s replaced by what they point to.

    A recursive schema (a tree whose nodes hold nodes) is cut to "any value" after
    ``_REPEATS`` levels; the validator still checks every level against the real schema.
    """
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if seen.count(ref) >= _REPEATS:
            return {}
        seen, schema = (*seen, ref), resolve(schema, root)
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("$defs", "definitions"):
            continue
        if key in _MAP and isinstance(value, dict):
            result[key] = {k: inline_refs(v, root, seen) for k, v in value.items()}
        elif key in _MANY and isinstance(value, list):
            result[key] = [inline_refs(v, root, seen) for v in value]
        elif key in _ONE and isinstance(value, dict):
            result[key] = inline_refs(value, root, seen)
        else:
            result[key] = copy.deepcopy(value)
    return result


def map_subschemas(schema: Mapping[str, Any], fn: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of ``schema`` with ``fn`` applied to each of its direct subschemas.

    Only keywords hold subschemas: a property *named* ``examples`` or ``pattern`` is a
    subschema to visit, never the keyword. Other values (``enum``, ``default``...) are kept.
    """
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _MAP and isinstance(value, dict):
            result[key] = {name: fn(sub) for name, sub in value.items()}
        elif key in _MANY and isinstance(value, list):
            result[key] = [fn(sub) for sub in value]
        elif key in _ONE and isinstance(value, dict):
            result[key] = fn(value)
        else:
            result[key] = value
    return result


def subschemas(schema: Mapping[str, Any]) -> list[Any]:
    """The direct subschemas of ``schema`` (see ``map_subschemas``)."""
    found: list[Any] = []
    map_subschemas(schema, found.append)
    return found


def schema_types(schema: Any) -> list[str]:
    """The JSON types a schema names (implied ``object``/``array`` included); [] = any."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    if "properties" in schema:
        return ["object"]
    if "items" in schema or "prefixItems" in schema:
        return ["array"]
    return []


def main_type(schema: Any) -> str:
    """The one JSON type to show for a schema: its first non-null type, else ``any``."""
    types = [t for t in schema_types(schema) if t != "null"]
    if types:
        return types[0]
    branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
    for branch in branches if isinstance(branches, list) else ():
        if (found := main_type(branch)) != "any":
            return found
    enum = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(enum, list) and enum:
        return {bool: "boolean", int: "integer", float: "number"}.get(type(enum[0]), "string")
    return "any"


def describe_type(schema: Any, depth: int = 0) -> str:
    """Render a (ref-free) schema's shape in one line: ``array of {sku: string, qty?: integer}``."""
    if not isinstance(schema, dict):
        return "any"
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return " | ".join(dict.fromkeys(describe_type(b, depth) for b in branches))
    if depth and isinstance(schema.get("enum"), list):
        return "one of " + "/".join(str(v) for v in schema["enum"])
    shown = [_describe_one(t, schema, depth) for t in schema_types(schema)]
    return " | ".join(shown) or "any"


def _describe_one(json_type: str, schema: dict[str, Any], depth: int) -> str:
    properties, items = schema.get("properties"), schema.get("items")
    if json_type == "object" and isinstance(properties, dict) and properties and depth < 3:
        required = set(schema.get("required") or ())
        inner = ", ".join(
            f"{k}{'' if k in required else '?'}: {describe_type(v, depth + 1)}"
            for k, v in properties.items()
        )
        return "{" + inner + "}"
    if json_type == "array" and isinstance(items, dict) and items and depth < 3:
        return "array of " + describe_type(items, depth + 1)
    return json_type


def parameters_from_schema(schema: dict[str, Any]) -> tuple[ToolParameter, ...]:
    """One ``ToolParameter`` per top-level property, carrying its ref-free schema."""
    required = set(schema.get("required") or ())
    params = []
    for name, prop in schema.get("properties", {}).items():
        inlined = inline_refs(prop, schema) if isinstance(prop, dict) else {}
        enum = inlined.get("enum")
        params.append(
            ToolParameter(
                name=name,
                type=main_type(inlined),
                description=str(inlined.get("description") or ""),
                required=name in required,
                default=inlined.get("default"),
                enum=tuple(enum) if isinstance(enum, list) else (),
                schema=inlined,
            )
        )
    return tuple(params)
