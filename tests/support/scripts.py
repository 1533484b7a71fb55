"""Load a script of ``scripts/`` as a module, the way ``python scripts/NAME.py`` would run it."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import SCRIPTS_DIR


def load_script(name: str) -> ModuleType:
    """Import ``scripts/NAME.py`` as module ``NAME`` (registered in ``sys.modules``).

    ``scripts/`` is on the path while it imports, as when it is run, so its sibling imports
    (the shared ``_bench`` helper) resolve; its dataclasses look their module up by name.
    """
    sys.path.insert(0, str(SCRIPTS_DIR))
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS_DIR / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS_DIR))
