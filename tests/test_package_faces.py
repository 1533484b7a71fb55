"""Tests reach into another package's private modules only where this list says; it only shrinks.

The library itself is held to the package faces by import-linter (pyproject.toml: "Private
modules are imported only inside their own package"). A test may import the private modules
of the package it tests (``tests/strategies/`` imports ``freyr_dspy.strategies._run``); an
import of another package's private module is one of the pairs below, written before the faces
exported what the tests need. A new one fails (import the name from the package's face, or
export it there), and a pair no longer found fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast

from tests.support.paths import PROJECT_DIR as ROOT
from tests.support.paths import TESTS_DIR as TESTS

#: (test file, private module of another package) pairs still allowed.
ALLOWED = {
    ("tests/artifacts/test_artifacts.py", "freyr_dspy.benchmarks._todo"),
    ("tests/artifacts/test_artifacts.py", "freyr_dspy.compiling._compiler"),
    ("tests/artifacts/test_artifacts.py", "freyr_dspy.compiling._job"),
    ("tests/benchmarks/callnavi/test_benchmark.py", "freyr_dspy.compiling._gold"),
    ("tests/benchmarks/nlt/test_nlt_benchmark.py", "freyr_dspy.search._study"),
    ("tests/benchmarks/nlt/test_selection_parser.py", "freyr_dspy.roles._tool_selection"),
    ("tests/cli/test_cli_compile.py", "freyr_dspy.benchmarks._todo"),
    ("tests/compiling/test_compile_study.py", "freyr_dspy.cli._compile_progress"),
    ("tests/compiling/test_compiler.py", "freyr_dspy.benchmarks._todo"),
    ("tests/compiling/test_metrics.py", "freyr_dspy.benchmarks._todo"),
    ("tests/compiling/test_metrics.py", "freyr_dspy.domains._example"),
    ("tests/evaluation/test_evaluation_scoring.py", "freyr_dspy.compiling._compiler"),
    ("tests/evaluation/test_evaluation_scoring.py", "freyr_dspy.compiling._job"),
    ("tests/program/test_program.py", "freyr_dspy.domains._example"),
    ("tests/program/test_program.py", "freyr_dspy.roles._confirm"),
    ("tests/program/test_program.py", "freyr_dspy.strategies._freyr"),
    ("tests/program/test_properties_program.py", "freyr_dspy.benchmarks.callnavi._domain"),
    ("tests/program/test_properties_program.py", "freyr_dspy.domains._example"),
    ("tests/prompting/test_contract_grammars.py", "freyr_dspy.backends._llamacpp_grammar"),
    ("tests/prompting/test_contract_grammars.py", "freyr_dspy.backends._llamacpp_messages"),
    ("tests/prompting/test_contract_grammars.py", "freyr_dspy.benchmarks.callnavi._roles"),
    ("tests/prompting/test_contract_grammars.py", "freyr_dspy.domains._example"),
    ("tests/prompting/test_contract_grammars.py", "freyr_dspy.roles._tool_selection"),
    ("tests/prompting/test_contracts.py", "freyr_dspy.roles._signature_dump"),
    ("tests/prompting/test_demo_pool.py", "freyr_dspy.benchmarks._todo"),
    ("tests/prompting/test_demo_pool.py", "freyr_dspy.compiling._compiler"),
    ("tests/prompting/test_demo_pool.py", "freyr_dspy.compiling._job"),
    ("tests/prompting/test_lean_adapter.py", "freyr_dspy.strategies.retry._loop"),
    ("tests/prompting/test_properties_parsing.py", "freyr_dspy.benchmarks.callnavi._metrics"),
    ("tests/prompting/test_properties_parsing.py", "freyr_dspy.benchmarks.callnavi._roles"),
    ("tests/prompting/test_properties_parsing.py", "freyr_dspy.roles._library"),
    ("tests/prompting/test_properties_parsing.py", "freyr_dspy.roles._tool_selection"),
    ("tests/roles/test_chat_embedded.py", "freyr_dspy.strategies._steps"),
    ("tests/roles/test_role_contracts.py", "freyr_dspy.benchmarks.callnavi._domain"),
    ("tests/roles/test_role_contracts.py", "freyr_dspy.benchmarks.callnavi._planning"),
    ("tests/roles/test_role_contracts.py", "freyr_dspy.domains._example"),
    ("tests/roles/test_role_contracts.py", "freyr_dspy.strategies._freyr"),
    ("tests/serve/test_serve_cli.py", "freyr_dspy.cli._serve_cmd"),
    ("tests/serve/test_serve_cli.py", "freyr_dspy.testing._rules"),
    ("tests/serve/test_serve_embedded.py", "freyr_dspy.cli._serve_cmd"),
    ("tests/strategies/retry/test_blame_embedded.py", "freyr_dspy.prompting._narrowing"),
    ("tests/strategies/test_asks.py", "freyr_dspy.roles._asks"),
    ("tests/strategies/test_asks_embedded.py", "freyr_dspy.datasets._replies"),
    ("tests/strategies/test_calibration.py", "freyr_dspy.backends._llamacpp_scoring"),
    ("tests/strategies/test_native.py", "freyr_dspy.backends._llamacpp_tools"),
    ("tests/strategies/test_prompted_strategy.py", "freyr_dspy.roles._prompted"),
    ("tests/strategies/test_scored_confirm.py", "freyr_dspy.backends._llamacpp_scoring"),
    ("tests/support/callnavi_fakes.py", "freyr_dspy.benchmarks.callnavi._domain"),
    ("tests/support/compile_fakes.py", "freyr_dspy.benchmarks._todo"),
    ("tests/support/search_fixtures.py", "freyr_dspy.domains._example"),
    ("tests/support/tiny_benchmark.py", "freyr_dspy.domains._example"),
    ("tests/support/tiny_benchmark.py", "freyr_dspy.testing._rules"),
    ("tests/tools/test_tools.py", "freyr_dspy.domains._example"),
}


def reach_ins() -> set[tuple[str, str]]:
    """Every (test file, module) where a test imports another package's private module."""
    found = set()
    for path in sorted(TESTS.rglob("*.py")):
        mirrored = ".".join(("freyr_dspy", *path.parent.relative_to(TESTS).parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                package = _private_package(node.module)
                if package and not _inside(mirrored, package):
                    found.add((path.relative_to(ROOT).as_posix(), node.module))
    return found


def _private_package(module: str) -> str | None:
    """The package whose private module ``module`` is (None: a public module)."""
    parts = module.split(".")
    if parts[0] != "freyr_dspy":
        return None
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_"):
            return ".".join(parts[:index])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_test_reaches_into_another_package_beyond_the_list() -> None:
    new = sorted(reach_ins() - ALLOWED)
    assert not new, f"import these from the package's face (export them there): {new}"


def test_the_list_only_shrinks() -> None:
    gone = sorted(ALLOWED - reach_ins())
    assert not gone, f"no longer imported: remove from ALLOWED: {gone}"


def test_the_private_package_of_a_module_is_read_from_its_first_private_part() -> None:
    assert _private_package("freyr_dspy.strategies.retry._loop") == "freyr_dspy.strategies.retry"
    assert _private_package("freyr_dspy.strategies") is None
    assert _private_package("dspy._private") is None
    assert _inside("freyr_dspy.strategies.retry", "freyr_dspy.strategies")
    assert not _inside("freyr_dspy.strategiesx", "freyr_dspy.strategies")
