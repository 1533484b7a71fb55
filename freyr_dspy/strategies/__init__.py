"""Registry of strategies: name -> ``Strategy``. Each strategy declares the roles it uses."""

from __future__ import annotations

from freyr_dspy.registry import Registry
from freyr_dspy.strategies.base import FunctionStrategy, ModelFailure, Run, Strategy
from freyr_dspy.strategies.freyr import FREYR

#: The modules named here register further strategies when imported (kept lazy); plugins
#: (the benchmarks' own strategies) register theirs with ``register_strategy``.
STRATEGIES: Registry[Strategy] = Registry(
    "strategy",
    (
        "freyr_dspy.strategies.native",
        "freyr_dspy.strategies.prompted",
        "freyr_dspy.strategies.nlt",
        "freyr_dspy.strategies.gated",
    ),
    freyr=FREYR,
)
load_strategies = STRATEGIES.load_all
get_strategy = STRATEGIES.get_named


def register_strategy(strategy: Strategy) -> None:
    """Add (or replace) a strategy under its name."""
    STRATEGIES.register(strategy.name, strategy)


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
