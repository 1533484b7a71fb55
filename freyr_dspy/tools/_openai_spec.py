"""Tools from OpenAI-style function dicts, as users copy them from an API call or a file.

Accepted shapes: the Chat Completions one (``{"type": "function", "function": {name,
description, parameters}}``), the flat Responses one (``{"type": "function", name, ...}``) and a
bare ``{name, description, parameters}``. A malformed dict is a ``ConfigError`` in one line
that names the dict by its position, since it may have no usable name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from freyr_dspy.errors import ConfigError, did_you_mean
from freyr_dspy.tools._tool import Tool

__all__ = ["tools_from_openai"]


def tools_from_openai(
    specs: Iterable[Mapping[str, Any]],
    functions: Mapping[str, Callable[..., Any]] | None = None,
    *,
    library: str | None = None,
) -> list[Tool]:
    """Build one tool per OpenAI tool dict, executed by ``functions[name]`` when given.

    Raises:
        ConfigError: for a dict that is not a function tool, lacks a name or has a bad
            schema, and for functions that name no tool.
    """
    if isinstance(specs, Mapping | str | bytes) or not isinstance(specs, Iterable):
        raise ConfigError(
            f"OpenAI tools: expected a list of tool dicts, got {type(specs).__name__} "
            "(wrap a single tool in a list)"
        )
    if functions is not None and not isinstance(functions, Mapping):
        raise ConfigError(
            f"OpenAI tools: functions must map tool names to callables, "
            f"got {type(functions).__name__}"
        )
    functions = dict(functions or {})
    tools = [_tool(i, spec, functions, library) for i, spec in enumerate(specs)]
    names = [t.name for t in tools]
    if unused := [name for name in functions if name not in names]:
        raise ConfigError(
            f"OpenAI tools: functions given for unknown tools {', '.join(map(repr, unused))}; "
            f"the tools are {', '.join(names) or 'none'}.{did_you_mean(unused[0], names)}"
        )
    return tools


def _tool(
    index: int, spec: Any, functions: Mapping[str, Callable[..., Any]], library: str | None
) -> Tool:
    where = f"OpenAI tool #{index + 1}"
    body = _function_part(where, spec)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        keys = ", ".join(map(str, body)) or "none"
        raise ConfigError(f"{where}: needs a non-empty string 'name' (keys given: {keys})")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise ConfigError(f"{where} ({name}): 'description' must be a string")
    return Tool.from_json_schema(
        name,
        description or "",
        body.get("parameters"),
        function=functions.get(name),
        library=library,
    )


def _function_part(where: str, spec: Any) -> Mapping[str, Any]:
    """The dict holding name/description/parameters, whichever shape was given."""
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{where}: expected a dict, got {type(spec).__name__}")
    kind = spec.get("type", "function")
    if kind != "function":
        raise ConfigError(f"{where}: type {kind!r} is not a function tool (expected 'function')")
    if "function" not in spec:
        return spec
    inner = spec["function"]
    if not isinstance(inner, Mapping):
        raise ConfigError(
            f"{where}: 'function' must be a dict with name, description and parameters, "
            f"got {type(inner).__name__}"
        )
    return inner
