"""Every public module says what it exports, and exports only what it has."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import freyr_dspy

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(freyr_dspy.__path__, "freyr_dspy.")
    if not any(part.startswith("_") for part in m.name.split("."))
)


@pytest.mark.parametrize("name", MODULES)
def test_a_public_module_declares_all_and_every_name_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    lazy = {"McpConnection"}  # freyr_dspy's module __getattr__ imports it on first use
    assert [n for n in exported if n not in lazy and not hasattr(module, n)] == []
