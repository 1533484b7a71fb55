"""Registry of strategies: name -> ``Strategy``. Each strategy declares the roles it uses."""

from __future__ import annotations

from freyr_dspy._plugins import import_optional
from freyr_dspy.errors import UnknownNameError
from freyr_dspy.strategies.base import FunctionStrategy, ModelFailure, Run, Strategy
from freyr_dspy.strategies.freyr import FREYR

STRATEGIES: dict[str, Strategy] = {FREYR.name: FREYR}

#: Modules that register further strategies when imported (kept lazy and optional).
_STRATEGY_MODULES: tuple[str, ...] = (
    "freyr_dspy.strategies.native",
    "freyr_dspy.strategies.prompted",
    "freyr_dspy.strategies.nlt",
    "freyr_dspy.strategies.gated",
    "freyr_dspy.callnavi.strategies",
)


def register_strategy(strategy: Strategy) -> None:
    """Add (or replace) a strategy in the registry."""
    STRATEGIES[strategy.name] = strategy


def load_strategies() -> dict[str, Strategy]:
    """Import every strategy module and return the registry."""
    import_optional(_STRATEGY_MODULES)
    return STRATEGIES


def get_strategy(name: str) -> Strategy:
    """Return the strategy called ``name``.

    Raises:
        UnknownNameError: with the known strategies and a "did you mean".
    """
    if name not in STRATEGIES:
        load_strategies()
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
    "load_strategies",
    "register_strategy",
]
