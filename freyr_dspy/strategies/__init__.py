"""Registry of strategies: name -> ``Strategy``. Each strategy declares the roles it uses."""

from __future__ import annotations

from freyr_dspy._plugins import Registry
from freyr_dspy.strategies.base import FunctionStrategy, ModelFailure, Run, Strategy
from freyr_dspy.strategies.freyr import FREYR

#: The modules after FREYR register further strategies when imported (kept lazy and optional).
STRATEGIES: Registry[Strategy] = Registry(
    "strategy",
    (
        "freyr_dspy.strategies.native",
        "freyr_dspy.strategies.prompted",
        "freyr_dspy.strategies.nlt",
        "freyr_dspy.strategies.gated",
        "freyr_dspy.callnavi.strategies",
    ),
    FREYR,
)
register_strategy = STRATEGIES.register
load_strategies = STRATEGIES.load_all
get_strategy = STRATEGIES.get_named


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
