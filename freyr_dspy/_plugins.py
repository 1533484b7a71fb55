"""Import optional modules that register themselves (domains, roles, strategies, benchmarks).

Registries stay plain dicts; modules that are heavy or optional are imported on first use.
A module that is simply absent is skipped; an import error *inside* a module propagates.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable


def import_optional(modules: Iterable[str]) -> None:
    """Import each module, skipping the ones that do not exist."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise
