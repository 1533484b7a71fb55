"""Registries of named parts (domains, strategies, benchmarks) filled by self-registering modules.

Modules that are heavy or optional are imported on first use. A module that is simply absent is
skipped; an import error *inside* a module propagates.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Protocol, TypeVar

from freyr_dspy.errors import UnknownNameError


class Named(Protocol):
    """Anything registered by its ``name``."""

    @property
    def name(self) -> str:
        """The registry key."""
        ...


T = TypeVar("T", bound=Named)


def import_optional(modules: Iterable[str]) -> None:
    """Import each module, skipping the ones that do not exist."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise


class Registry(dict[str, T]):
    """A name -> part dict that imports its plugin modules the first time a name is missing.

    It stays a plain dict so callers (and tests) can read, patch and iterate it directly.
    """

    def __init__(self, kind: str, modules: tuple[str, ...], *parts: T) -> None:
        super().__init__((part.name, part) for part in parts)
        self.kind = kind
        #: Modules that register further parts when imported.
        self.modules = modules

    def register(self, part: T) -> None:
        """Add (or replace) a part."""
        self[part.name] = part

    def load_all(self) -> Registry[T]:
        """Import every plugin module and return the registry."""
        import_optional(self.modules)
        return self

    def get_named(self, name: str) -> T:
        """Return the part called ``name``.

        Raises:
            UnknownNameError: with the known names and a "did you mean".
        """
        if name not in self:
            self.load_all()
        if name not in self:
            raise UnknownNameError(self.kind, name, self)
        return self[name]
