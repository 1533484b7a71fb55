"""Tools the model can call, and the toolbox that renders and executes them.

``McpConnection`` is imported on first use: the MCP SDK takes about a second to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from freyr_dspy.tools._fingerprint import toolbox_changes, toolbox_fingerprint
from freyr_dspy.tools._schema import inline_refs, map_subschemas, subschemas
from freyr_dspy.tools._tool import STATE_PARAMETER, Tool, ToolParameter
from freyr_dspy.tools._toolbox import (
    CatalogLevel,
    Execution,
    Toolbox,
    catalog_names,
    normalize_name,
    recorded_outcome,
    render_tool_spec,
)

if TYPE_CHECKING:
    from freyr_dspy.tools._mcp import McpConnection

__all__ = [
    "STATE_PARAMETER",
    "CatalogLevel",
    "Execution",
    "McpConnection",
    "Tool",
    "ToolParameter",
    "Toolbox",
    "catalog_names",
    "inline_refs",
    "map_subschemas",
    "normalize_name",
    "recorded_outcome",
    "render_tool_spec",
    "subschemas",
    "toolbox_changes",
    "toolbox_fingerprint",
]


def __getattr__(name: str) -> Any:
    if name == "McpConnection":
        return importlib.import_module("freyr_dspy.tools._mcp").McpConnection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
