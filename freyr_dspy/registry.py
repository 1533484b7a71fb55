"""Registries of named parts (domains, roles, strategies, benchmarks) and the plugins that add some.

The core registers its own parts; each registry may also name core modules that register more
when imported (kept lazy: some are heavy). Everything else is a **plugin**: a module named by an
entry point of the ``freyr_dspy.plugins`` group, imported the first time any registry misses a
name. The built-in benchmarks (LLMaker, NLT, CallNavi, todo) are plugins declared in our own
``pyproject.toml``, so the core never imports them; another package adds its domains, roles,
strategies and benchmarks the same way::

    [project.entry-points."freyr_dspy.plugins"]
    mybench = "mypackage.freyr_plugin"

A module or plugin that fails to import is an error that names it: nothing is skipped silently.
"""

from __future__ import annotations

import importlib
import threading
from importlib.metadata import entry_points
from typing import TypeVar

from freyr_dspy.errors import ConfigError, UnknownNameError, one_line

__all__ = ["PLUGIN_GROUP", "Registry", "load_plugins"]

#: The entry-point group of plugins (modules that register parts when imported).
PLUGIN_GROUP = "freyr_dspy.plugins"

T = TypeVar("T")

_plugins_loaded = False
_plugins_lock = threading.RLock()  # re-entrant: a plugin may look a name up while importing


def load_plugins() -> None:
    """Import every installed plugin once.

    Raises:
        ConfigError: naming the plugin whose module failed to import, and why.
    """
    global _plugins_loaded
    with _plugins_lock:
        if _plugins_loaded:
            return
        _plugins_loaded = True  # set first: a plugin may look a name up while importing
        for plugin in sorted(entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name):
            try:
                plugin.load()
            except Exception as exc:
                _plugins_loaded = False  # every later lookup reports the broken plugin again
                raise ConfigError(
                    f"plugin {plugin.name!r} ({plugin.value}) failed to import: "
                    f"{one_line(exc, limit=None, typed=True)}"
                ) from exc


class Registry(dict[str, T]):
    """A name -> part dict that imports its modules and the plugins when a name is missing.

    It stays a plain dict so callers (and tests) can read, patch and iterate it directly.
    """

    def __init__(self, kind: str, modules: tuple[str, ...] = (), **parts: T) -> None:
        super().__init__(parts)
        self.kind = kind
        #: Core modules that register further parts when imported.
        self.modules = modules

    def register(self, name: str, part: T) -> None:
        """Add (or replace) a part."""
        self[name] = part

    def load_all(self) -> Registry[T]:
        """Import the registry's modules and every plugin; return the registry."""
        for module in self.modules:
            importlib.import_module(module)
        load_plugins()
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
