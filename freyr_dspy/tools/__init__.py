"""Tools the model can call, and the toolbox that renders and executes them."""

from freyr_dspy.tools.tool import STATE_PARAMETER, Tool, ToolParameter
from freyr_dspy.tools.toolbox import CatalogLevel, Execution, Toolbox, normalize_name

__all__ = [
    "STATE_PARAMETER",
    "CatalogLevel",
    "Execution",
    "Tool",
    "ToolParameter",
    "Toolbox",
    "normalize_name",
]
