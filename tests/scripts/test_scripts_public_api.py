"""The scripts use freyr_dspy's public API only, so they read as examples and do not pin internals.

The rule, for every ``scripts/*.py`` (every import statement, at any depth of the file,
``TYPE_CHECKING`` blocks and imports inside functions included):

- ``import M`` and ``from M import ...`` where ``M`` is ``freyr_dspy`` or starts with
  ``freyr_dspy.``: ``M`` must be a public unit, that is ``freyr_dspy`` itself, a top-level
  module or package ``freyr_dspy.X``, or a sub-package ``freyr_dspy.X.Y`` (a directory with an
  ``__init__.py``), with no path segment starting with ``_``. A module inside a package
  (``freyr_dspy.strategies._run``, ``freyr_dspy.testing._processes``) and anything deeper is an
  implementation module: import what it defines from its package.
- ``from M import a, b``: each name must be in ``M.__all__`` (``M`` is imported to read it);
  ``from M import *`` is refused.
- Relative imports and the scripts' own helpers (``from _bench import ...``) are not checked.

The only exceptions are the (script, module) pairs of ``EXCEPTIONS``, each with its reason; an
exception no longer needed (the import is gone, or now allowed) fails the test, so the list
only shrinks.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import SCRIPTS_DIR

ROOT = "freyr_dspy"
SCRIPTS = sorted(SCRIPTS_DIR.glob("*.py"))

#: (script, module) -> why the script may import that module although the rule forbids it.
EXCEPTIONS = {
    ("bench_margin.py", "freyr_dspy.strategies._freyr"): (
        "replays FREYR's planning steps one by one (plan, written and scored verdicts per "
        "margin) to choose an internal constant; no public API runs a step alone"
    ),
    ("bench_margin.py", "freyr_dspy.strategies._scored_confirm"): "as above: scored verdicts",
    ("bench_tools.py", "freyr_dspy.strategies._grounding"): (
        "counts copied examples by the copied-example guard's own reading of a tool"
    ),
}


@dataclass(frozen=True)
class Import:
    """One import of freyr_dspy in a script: the module and the names taken from it."""

    where: str
    module: str
    names: tuple[str, ...]  # empty for ``import M``


def freyr_imports(source: str, filename: str) -> list[Import]:
    """Every import of freyr_dspy in ``source``, wherever it stands in the file."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found += [
                Import(f"{filename}:{node.lineno}", alias.name, ())
                for alias in node.names
                if _is_freyr(alias.name)
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_freyr(node.module):
            names = tuple(alias.name for alias in node.names)
            found.append(Import(f"{filename}:{node.lineno}", node.module or "", names))
    return found


def _is_freyr(module: str | None) -> bool:
    return module == ROOT or (module or "").startswith(ROOT + ".")


def violations(imp: Import) -> list[str]:
    """What is wrong with ``imp`` under the rule of this file's docstring (nothing if allowed)."""
    parts = imp.module.split(".")
    if any(part.startswith("_") for part in parts):
        return [f"{imp.where}: {imp.module} is private"]
    if len(parts) > 3:
        return [f"{imp.where}: {imp.module} is an implementation module; import from its package"]
    module = importlib.import_module(imp.module)
    if len(parts) == 3 and not hasattr(module, "__path__"):
        return [f"{imp.where}: {imp.module} is a module inside a package; import from the package"]
    if "*" in imp.names:
        return [f"{imp.where}: from {imp.module} import * (name what is used)"]
    exported = set(getattr(module, "__all__", ()))
    return [
        f"{imp.where}: {name} is not in {imp.module}.__all__"
        for name in imp.names
        if name not in exported
    ]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_script_imports_only_public_names_of_public_packages(script: Path) -> None:
    imports = freyr_imports(script.read_text(encoding="utf-8"), script.name)
    excepted = {module for name, module in EXCEPTIONS if name == script.name}
    checked = [imp for imp in imports if imp.module not in excepted]
    assert [problem for imp in checked for problem in violations(imp)] == []
    still_needed = {imp.module for imp in imports if imp.module in excepted and violations(imp)}
    assert excepted == still_needed, "remove the exceptions no longer needed from EXCEPTIONS"


BAD = """
from freyr_dspy.settings import Settings
from freyr_dspy.benchmarks.callnavi import get_benchmark_nowhere
def later():
    from freyr_dspy.strategies._run import Run
    import freyr_dspy._files
    from freyr_dspy.tools import *
"""


def test_the_rule_refuses_private_modules_unexported_names_and_star() -> None:
    problems = [p for imp in freyr_imports(BAD, "bad.py") for p in violations(imp)]
    assert problems == [
        "bad.py:3: get_benchmark_nowhere is not in freyr_dspy.benchmarks.callnavi.__all__",
        "bad.py:5: freyr_dspy.strategies._run is private",
        "bad.py:6: freyr_dspy._files is private",
        "bad.py:7: from freyr_dspy.tools import * (name what is used)",
    ]


def test_every_script_is_read() -> None:
    names = {path.name for path in SCRIPTS}
    assert {"_bench.py", "bench_margin.py", "bench_overhead.py"} <= names
    assert all(freyr_imports(path.read_text(encoding="utf-8"), path.name) for path in SCRIPTS)
