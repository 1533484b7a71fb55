"""Registry of strategies: name -> ``Strategy``. Each strategy declares the roles it uses."""

from __future__ import annotations

import importlib

from freyr_dspy.errors import UnknownNameError
from freyr_dspy.strategies.base import FunctionStrategy, ModelFailure, Run, Strategy
from freyr_dspy.strategies.freyr import FREYR

STRATEGIES: dict[str, Strategy] = {FREYR.name: FREYR}

#: Modules that register further strategies when imported (kept lazy and optional).
_STRATEGY_MODULES: tuple[str, ...] = ()


def register_strategy(strategy: Strategy) -> None:
    """Add (or replace) a strategy in the registry."""
    STRATEGIES[strategy.name] = strategy


def get_strategy(name: str) -> Strategy:
    """Return the strategy called ``name``.

    Raises:
        UnknownNameError: with the known strategies and a "did you mean".
    """
    for module in _STRATEGY_MODULES:
        importlib.import_module(module)
    if name not in STRATEGIES:
        raise UnknownNameError("strategy", name, STRATEGIES)
    return STRATEGIES[name]


__all__ = [
    "STRATEGIES",
    "FunctionStrategy",
    "ModelFailure",
    "Run",
    "Strategy",
    "get_strategy",
    "register_strategy",
]
