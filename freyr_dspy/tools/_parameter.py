"""``ToolParameter``: one argument of a tool, as catalogs and the model see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolParameter"]


@dataclass(frozen=True)
class ToolParameter:
    """One argument of a tool, as shown to the model.

    ``schema`` holds the argument's full JSON schema when the tool was built from one (nested
    objects and arrays included); catalogs render its shape, validation uses the tool's schema.
    """

    name: str
    type: str
    description: str = ""
    required: bool = True
    default: Any = None
    enum: tuple[Any, ...] = ()
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False, repr=False)
