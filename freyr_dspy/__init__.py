"""freyr-dspy: reliable, cheap tool use for small LLMs, as compiled DSPy programs."""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from freyr_dspy.artifacts import load, save
from freyr_dspy.backends import make_lm
from freyr_dspy.domains import Domain, get_domain, register_domain
from freyr_dspy.errors import (
    ArtifactError,
    BackendError,
    ConfigError,
    DataError,
    FreyrError,
    ToolError,
    UnknownModelError,
    UnknownRoleError,
)
from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles import ROLES
from freyr_dspy.schemas import (
    CallRecord,
    Failure,
    Outcome,
    Result,
    RoleModel,
    RoleUsage,
    Sampling,
)
from freyr_dspy.settings import Settings
from freyr_dspy.strategies import STRATEGIES
from freyr_dspy.tools import Tool, Toolbox, ToolParameter

if TYPE_CHECKING:
    from freyr_dspy.compiling import CompileSettings
    from freyr_dspy.tools import McpConnection
    from freyr_dspy.workflows import compile, evaluate

try:
    __version__ = version("freyr-dspy")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"

__all__ = [
    "ROLES",
    "STRATEGIES",
    "ArtifactError",
    "BackendError",
    "CallRecord",
    "CompileSettings",
    "ConfigError",
    "DataError",
    "Domain",
    "Failure",
    "FreyrError",
    "FreyrProgram",
    "McpConnection",
    "Outcome",
    "Result",
    "RoleModel",
    "RoleUsage",
    "Sampling",
    "Settings",
    "Tool",
    "ToolError",
    "ToolParameter",
    "Toolbox",
    "UnknownModelError",
    "UnknownRoleError",
    "__version__",
    "compile",
    "evaluate",
    "get_domain",
    "load",
    "make_lm",
    "register_domain",
    "save",
]

#: Attributes imported on first use: name -> module.
_LAZY = {
    # NOTE: the MCP SDK takes about a second to import; the compile stack pulls in the
    # optimizers. Neither is needed to load and run a program.
    "McpConnection": "freyr_dspy.tools",
    "CompileSettings": "freyr_dspy.compiling",
    "compile": "freyr_dspy.workflows",
    "evaluate": "freyr_dspy.workflows",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
