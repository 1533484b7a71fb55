"""Every strategy, with every switch on in turn, wrapped in the gate or not, is rebuilt by its
own ``config()``: an artifact that records a strategy gets the same strategy back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from freyr_dspy.registry import load_plugins
from freyr_dspy.strategies import (
    STRATEGIES,
    StrategyModule,
    load_strategies,
    make_strategy,
    setting_defaults,
    setting_names,
)
from freyr_dspy.strategies._gated import INNER_STRATEGIES, Gated


def _defaults(name: str) -> dict[str, Any]:
    return setting_defaults(STRATEGIES.get_named(name))


def _variants(name: str) -> Iterator[dict[str, Any]]:
    """The defaults, each boolean switch flipped alone, all flipped at once, and each number
    setting moved off its default (with every switch it needs on)."""
    defaults = _defaults(name)
    flips = {k: not v for k, v in defaults.items() if isinstance(v, bool)}
    yield {}
    for key, value in flips.items():
        yield {key: value}
    if len(flips) > 1:
        yield flips
    switches_on = {k: True for k, v in defaults.items() if isinstance(v, bool)}
    for key, value in defaults.items():
        if isinstance(value, int) and not isinstance(value, bool):
            yield {key: value + 1}
        elif value is None:  # a number that is off by default (freyr's abstain_margin)
            yield {**switches_on, "calibrate": False, key: 2.0}


def _strategies() -> list[tuple[str, dict[str, Any]]]:
    load_plugins()  # the benchmarks' own strategies too
    load_strategies()
    cases = []
    for name in sorted(STRATEGIES):
        for settings in _variants(name):
            try:
                make_strategy(name, **settings)
            except Exception:  # a combination the strategy refuses (abstain without confirm)
                continue
            cases.append((name, settings))
    return cases


CASES = _strategies()


def _same(rebuilt: StrategyModule, strategy: StrategyModule) -> None:
    assert type(rebuilt) is type(strategy)
    assert rebuilt.config() == strategy.config()
    assert rebuilt.role_names == strategy.role_names
    assert [n for n, _ in rebuilt.named_predictors()] == [n for n, _ in strategy.named_predictors()]


@pytest.mark.parametrize(("name", "settings"), CASES, ids=[f"{n}{s}" for n, s in CASES])
def test_a_strategy_is_rebuilt_by_its_config(name: str, settings: dict[str, Any]) -> None:
    strategy = make_strategy(name, **settings)
    _same(make_strategy(name, **strategy.config()), strategy)
    assert set(strategy.config()) <= set(setting_names(STRATEGIES.get_named(name)))


INNER = [(n, s) for n, s in CASES if n in INNER_STRATEGIES]


@pytest.mark.parametrize(("name", "settings"), INNER, ids=[f"gated-{n}{s}" for n, s in INNER])
def test_a_gated_strategy_keeps_every_setting_of_its_inner_one(
    name: str, settings: dict[str, Any]
) -> None:
    inner = make_strategy(name, **settings)
    gated = Gated(inner=inner, respond=False)
    assert gated.inner is inner and gated.config()["inner"] == {"name": name, **inner.config()}
    rebuilt = make_strategy("gated", **gated.config())
    _same(rebuilt, gated)
    _same(rebuilt.inner, inner)


def test_switches_on_the_inner_strategy_change_what_the_gate_runs() -> None:
    gated = Gated(inner=make_strategy("freyr", require_stated=True, split_calls=True))
    assert gated.inner.calling.require_stated and gated.inner.calling.split_calls
    assert "confirm" in gated.role_names  # a Freyr given whole keeps its confirm role


def test_artifacts_written_before_nesting_still_name_their_inner_strategy() -> None:
    assert Gated(inner="freyr").config() == {"inner": {"name": "freyr", "confirm": False}}
    assert make_strategy("gated", inner="nlt").config() == {"inner": {"name": "nlt"}}


def test_strategies_are_listed_with_their_switches() -> None:
    assert len(CASES) > len(STRATEGIES)  # some strategy has switches to flip
    assert ("freyr", {"require_stated": True}) in CASES
    assert ("nlt", {"exclude_blamed": True}) in CASES
