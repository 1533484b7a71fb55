"""Read a ``dspy.Tool`` as the parts of a freyr JSON-schema tool."""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Callable
from typing import Any

import dspy

from freyr_dspy.errors import ConfigError

__all__ = ["dspy_parts"]


def dspy_parts(tool: dspy.Tool) -> tuple[str, str, dict[str, Any], Callable[..., Any]]:
    """Return a ``dspy.Tool``'s name, description, arguments schema and a sync caller.

    DSPy keeps one JSON schema per argument (``tool.args``) and marks optional ones with a
    ``default``; they become the properties of one object schema, required unless defaulted.

    Raises:
        ConfigError: when ``tool`` is not a ``dspy.Tool`` or its ``args`` are not a dict.
    """
    if not isinstance(tool, dspy.Tool):
        raise ConfigError(f"Tool.from_dspy expects a dspy.Tool, got {type(tool).__name__}")
    args = tool.args or {}
    if not isinstance(args, dict):
        raise ConfigError(f"dspy tool {tool.name!r}: args must map names to JSON schemas")
    schema = {
        "type": "object",
        "properties": copy.deepcopy(args),
        "required": [k for k, v in args.items() if not (isinstance(v, dict) and "default" in v)],
    }
    return str(tool.name), str(tool.desc or ""), schema, _caller(tool)


def _caller(tool: dspy.Tool) -> Callable[..., Any]:
    """Call the tool the way DSPy would (its own arg parsing), awaiting an async function."""

    def call(**arguments: Any) -> Any:
        if inspect.iscoroutinefunction(tool.func):
            return asyncio.run(tool.acall(**arguments))
        return tool(**arguments)

    return call
