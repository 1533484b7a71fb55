"""Where a dataset's tools come from, and which toolbox each example is asked against.

Tools come from a JSON file of OpenAI tool dicts (``--tools``; a list is one toolbox, an
object maps toolbox names to lists, for suites over several toolboxes), an MCP server
(``--mcp``) or a Python module (``--tools-module pkg.mod:attr``: a ``Toolbox``, a list of
functions or ``Tool``s, or a function returning one of those). An example may carry its own
``tools`` or name one ``toolbox`` of the file. Every gold call is checked against its tool's
schema when the examples are loaded, so a typo in the data is found before any model runs.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from freyr_dspy.datasets._format import AnyOf, CallExample, ToolResult
from freyr_dspy.errors import ConfigError, DataError, ToolError, did_you_mean
from freyr_dspy.tools import Tool, Toolbox

__all__ = [
    "DEFAULT_TOOLBOX",
    "check_gold",
    "load_tools_file",
    "toolbox_from_module",
    "toolbox_of",
]

#: The name of the one toolbox of a file that holds a plain list.
DEFAULT_TOOLBOX = "default"


def load_tools_file(path: str | Path) -> dict[str, Toolbox]:
    """Read OpenAI tool dicts: a list (one toolbox) or ``{name: [tools]}`` (several).

    Raises:
        DataError: an unreadable file, invalid JSON, or a malformed tool (named by position).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(path, None, f"cannot read tools: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    groups = data if isinstance(data, dict) else {DEFAULT_TOOLBOX: data}
    boxes = {}
    for name, tools in groups.items():
        try:
            boxes[name] = Toolbox.from_openai(tools)
        except ConfigError as exc:
            where = "" if name == DEFAULT_TOOLBOX else f"toolbox {name!r}: "
            raise DataError(path, None, f"{where}{exc}") from exc
    return boxes


def toolbox_from_module(spec: str) -> Toolbox:
    """Import ``pkg.module:attribute`` and make a toolbox of it.

    The attribute is a ``Toolbox``, a list of Python functions or ``Tool``s, or a function
    taking no arguments that returns one of those.

    Raises:
        ConfigError: a malformed spec, a module that fails to import, a missing attribute,
            or something that is not tools.
    """
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"--tools-module {spec!r}: expected MODULE:ATTRIBUTE, e.g. app.tools:box")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--tools-module {spec!r}: cannot import {module_name}: {exc}") from exc
    value = getattr(module, attribute, None)
    if value is None:
        raise ConfigError(f"--tools-module {spec!r}: {module_name} has no {attribute!r}")
    if callable(value) and not isinstance(value, Toolbox) and not _is_tool_function(value):
        value = value()
    return _as_toolbox(value, spec)


def _is_tool_function(value: Any) -> bool:
    """A function with parameters is a tool itself, not a factory of tools."""
    try:
        return bool(inspect.signature(value).parameters)
    except (TypeError, ValueError):
        return False


def _as_toolbox(value: Any, spec: str) -> Toolbox:
    if isinstance(value, Toolbox):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str) and value:
        return Toolbox(_as_tool(item, spec) for item in value)
    raise ConfigError(
        f"--tools-module {spec!r}: expected a Toolbox or a list of functions or Tools, "
        f"got {type(value).__name__}"
    )


def _as_tool(item: Any, spec: str) -> Tool:
    if isinstance(item, Tool):
        return item
    if callable(item):
        return Tool.from_function(item)
    raise ConfigError(f"--tools-module {spec!r}: {item!r} is neither a function nor a Tool")


def toolbox_of(example: CallExample, boxes: Mapping[str, Toolbox]) -> Toolbox:
    """The tools ``example`` is asked against: its own, the toolbox it names, or the only one.

    Raises:
        ValueError: naming what is wrong (the caller adds the file and line).
    """
    if example.tools is not None:
        try:
            return Toolbox.from_openai(example.tools)
        except ConfigError as exc:
            raise ValueError(f"tools: {exc}") from exc
    if example.toolbox is not None:
        if example.toolbox not in boxes:
            known = ", ".join(boxes) or "none"
            hint = did_you_mean(example.toolbox, boxes)
            raise ValueError(f"unknown toolbox {example.toolbox!r} (known: {known}).{hint}")
        return boxes[example.toolbox]
    if len(boxes) == 1:
        return next(iter(boxes.values()))
    if not boxes:
        raise ValueError("no tools: give the examples a tools file (--tools) or tools per row")
    raise ValueError(f"the row names no toolbox; the tools file has {', '.join(boxes)}")


def check_gold(example: CallExample, toolbox: Toolbox) -> CallExample:
    """Check every gold call against its tool's schema; return the row with canonical names.

    Each listed alternative value is checked too, so a misspelt enum member in ``any_of`` is
    found here rather than scored as a model failure.

    Raises:
        ValueError: the first unknown tool or schema violation, in one line.
    """
    calls = []
    for index, call in enumerate(example.calls or []):
        tool = toolbox.resolve(call.name)
        if tool is None:
            hint = did_you_mean(call.name, toolbox.names)
            raise ValueError(
                f"calls.{index}: unknown tool {call.name!r}; the toolbox has "
                f"{', '.join(toolbox.names)}.{hint}"
            )
        for arguments in _argument_variants(call.plain_arguments(), call.arguments):
            _validate(tool, arguments, f"calls.{index}")
        calls.append(call.model_copy(update={"name": tool.name}))
    results = [
        _checked_result(index, result, toolbox)
        for index, result in enumerate(example.results or [])
    ]
    update: dict[str, Any] = {"calls": calls} if example.calls is not None else {}
    if example.results is not None:
        update["results"] = results
    return example.model_copy(update=update) if update else example


def _checked_result(index: int, result: ToolResult, toolbox: Toolbox) -> ToolResult:
    """A reply row's tool result, named as its tool (which must be in the toolbox)."""
    tool = toolbox.resolve(result.name)
    if tool is None:
        hint = did_you_mean(result.name, toolbox.names)
        raise ValueError(
            f"results.{index}: unknown tool {result.name!r}; the toolbox has "
            f"{', '.join(toolbox.names)}.{hint}"
        )
    return result.model_copy(update={"name": tool.name})


def _argument_variants(plain: dict[str, Any], listed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The plain arguments, then one variant per listed alternative they do not hold."""
    variants = [plain]
    for name, value in listed.items():
        if isinstance(value, AnyOf):
            others = value.values if value.optional else value.values[1:]
            variants.extend({**plain, name: alternative} for alternative in others)
    return variants


def _validate(tool: Tool, arguments: dict[str, Any], where: str) -> None:
    try:
        tool.validate_arguments(arguments)
    except ToolError as exc:
        raise ValueError(f"{where}: gold call does not fit the tool's schema: {exc}") from exc
