"""Registries: plugins from entry points, strict module imports, one registry type."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from freyr_dspy import registry
from freyr_dspy.benchmarks import BENCHMARKS, get_benchmark
from freyr_dspy.errors import ConfigError, UnknownNameError
from freyr_dspy.registry import PLUGIN_GROUP, Registry

PLUGIN_SOURCE = """
from types import SimpleNamespace
from freyr_dspy.benchmarks import register_benchmark

register_benchmark(SimpleNamespace(name="mine"))
"""


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[EntryPoint]]:
    """Stand in for the installed plugins: the test fills the list; they load afresh."""
    installed: list[EntryPoint] = []
    monkeypatch.setattr(registry, "entry_points", lambda group: installed)
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield installed
    BENCHMARKS.pop("mine", None)
    sys.modules.pop("my_freyr_plugin", None)


def test_the_built_in_benchmarks_are_installed_plugins() -> None:
    declared = {ep.name: ep.value for ep in entry_points(group=PLUGIN_GROUP)}
    assert declared == {
        "llmaker": "freyr_dspy.benchmarks.llmaker._plugin",
        "nlt": "freyr_dspy.benchmarks.nlt._plugin",
        "callnavi": "freyr_dspy.benchmarks.callnavi._plugin",
        "todo": "freyr_dspy.benchmarks._todo",
    }
    assert {"llmaker", "nlt-alex", "nlt-sage", "callnavi", "todo"} <= set(BENCHMARKS.load_all())


def test_a_plugin_of_another_package_adds_its_benchmark(
    plugins: list[EntryPoint], tmp_path: Path
) -> None:
    (tmp_path / "my_freyr_plugin.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    plugins.append(EntryPoint("mine", "my_freyr_plugin", PLUGIN_GROUP))
    assert "mine" not in BENCHMARKS
    assert get_benchmark("mine").name == "mine"  # the miss imported the plugin


def test_a_plugin_that_fails_to_import_is_an_error_naming_it(plugins: list[EntryPoint]) -> None:
    plugins.append(EntryPoint("broken", "no_such_freyr_plugin", PLUGIN_GROUP))
    with pytest.raises(ConfigError, match=r"plugin 'broken' \(no_such_freyr_plugin\) failed"):
        get_benchmark("anything")
    with pytest.raises(ConfigError, match="plugin 'broken'"):  # every lookup says so again
        get_benchmark("anything")


def test_a_missing_core_module_is_an_error_not_skipped(plugins: list[EntryPoint]) -> None:
    parts: Registry[int] = Registry("number", ("freyr_dspy.no_such_module",), one=1)
    assert parts.get_named("one") == 1  # a known name needs no import
    with pytest.raises(ModuleNotFoundError, match=r"freyr_dspy\.no_such_module"):
        parts.get_named("two")


def test_an_unknown_name_suggests_the_nearest(plugins: list[EntryPoint]) -> None:
    parts: Registry[int] = Registry("number", one=1, three=3)
    with pytest.raises(UnknownNameError, match=r"unknown number 'thre'.*Did you mean 'three'"):
        parts.get_named("thre")
