"""Registry of strategies: name -> factory of a ``StrategyModule`` holding the roles it uses."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from freyr_dspy.errors import ConfigError
from freyr_dspy.registry import Registry
from freyr_dspy.strategies._answering import waits_for_results
from freyr_dspy.strategies._base import (
    FunctionStrategy,
    PlanningStrategy,
    StrategyFactory,
    StrategyModule,
    accepted_config,
    build_strategy,
    setting_defaults,
    setting_names,
)
from freyr_dspy.strategies._call_watch import watching_calls
from freyr_dspy.strategies._claims import CallWords, sentences
from freyr_dspy.strategies._executor import ToolExecutor
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.strategies._grounding import Evidence, unsupported_numbers
from freyr_dspy.strategies._ledger import Ledger
from freyr_dspy.strategies._policies import CallPolicy, PlanningPolicy
from freyr_dspy.strategies._presets import DEFAULT_STRATEGY, PRESET_LABEL, PRESETS, default_strategy
from freyr_dspy.strategies._request import Request, RunStarter, ToolChoice
from freyr_dspy.strategies._run import CallOverrides, Ending, ModelFailure, Run, call_text
from freyr_dspy.strategies._scored_confirm import CONFIRM_MARGIN

if TYPE_CHECKING:
    from freyr_dspy.strategies._gated import Gated
    from freyr_dspy.strategies._native import Native
    from freyr_dspy.strategies._nlt import Nlt
    from freyr_dspy.strategies._prompted import Prompted

#: Strategy classes whose modules register themselves on import, so they are imported on
#: first use (``from freyr_dspy.strategies import Gated``), after this package is complete.
_LAZY = {
    "Gated": "freyr_dspy.strategies._gated",
    "Native": "freyr_dspy.strategies._native",
    "Nlt": "freyr_dspy.strategies._nlt",
    "Prompted": "freyr_dspy.strategies._prompted",
}

#: The modules named here register further strategies when imported (kept lazy); plugins
#: (the benchmarks' own strategies) register theirs with ``register_strategy``.
STRATEGIES: Registry[StrategyFactory] = Registry(
    "strategy",
    (
        "freyr_dspy.strategies._native",
        "freyr_dspy.strategies._prompted",
        "freyr_dspy.strategies._nlt",
        "freyr_dspy.strategies._gated",
    ),
    freyr=Freyr,
)
load_strategies = STRATEGIES.load_all
get_strategy = STRATEGIES.get_named


def register_strategy(factory: StrategyFactory) -> None:
    """Add (or replace) a strategy under its name."""
    STRATEGIES.register(factory.name, factory)


def make_strategy(name: str, **config: Any) -> StrategyModule:
    """A fresh strategy module of the registered strategy ``name``, built from ``config``.

    Raises:
        UnknownNameError: for a strategy nobody registered.
        ConfigError: for a setting the strategy does not take.
    """
    factory = get_strategy(name)
    takes = setting_names(factory)
    unknown = sorted(set(config) - set(takes))
    if unknown:
        raise ConfigError(
            f"strategy {name!r} takes no setting {', '.join(map(repr, unknown))}; "
            f"it takes: {', '.join(takes) or 'none'}"
        )
    return build_strategy(factory, config)


def parse_label(label: str) -> tuple[str, dict[str, Any]]:
    """A contestant label: a strategy name, then settings switched on (or given) after ``+``.

    ``freyr+calibrate`` is ``("freyr", {"calibrate": True})``, so that a variant of a strategy
    runs beside the plain one in one evaluation and is reported under its own label. A
    setting that takes a number is written with its value: ``freyr+abstain_margin=2``.

    Raises:
        ConfigError: for an empty part (``freyr+``, ``+calibrate``) or a value that is not a
            number, ``true`` or ``false``.
    """
    name, *parts = label.split("+")
    if not name or not all(parts):
        raise ConfigError(f"strategy {label!r}: expected a name and '+setting' parts, none empty")
    return name, dict(_setting(label, part) for part in parts)


def _setting(label: str, part: str) -> tuple[str, Any]:
    """``calibrate`` -> ``("calibrate", True)``; ``abstain_margin=2`` -> ``(..., 2.0)``."""
    key, given, text = part.partition("=")
    if not given:
        return part, True
    if text.lower() in ("true", "false"):
        return key, text.lower() == "true"
    try:
        return key, float(text)
    except ValueError:
        raise ConfigError(
            f"strategy {label!r}: {key}={text!r} is not a number, true or false"
        ) from None


def strategy_label(strategy: StrategyModule) -> str:
    """The label that rebuilds ``strategy``: its name, then each changed setting after ``+``.

    The inverse of ``parse_label`` for settings a label can write (switches and numbers);
    a nested setting (``gated``'s inner strategy) is left out.
    """
    parts = [strategy.name]
    for key, value in strategy.config().items():
        if value is True:
            parts.append(key)
        elif value is False:
            parts.append(f"{key}=false")
        elif isinstance(value, int | float):
            parts.append(f"{key}={value:g}")
    return "+".join(parts)


def strategy_with(name: str, settings: Mapping[str, Any]) -> StrategyModule:
    """Strategy ``name`` built with the entries of ``settings`` its constructor takes.

    For settings that apply to some strategies only, such as a benchmark's ``respond`` (NLT's)
    or ``catalog`` (CallNavi's own strategies), given to whichever strategy is evaluated.

    Raises:
        UnknownNameError: for a strategy nobody registered.
    """
    factory = get_strategy(name)
    return build_strategy(factory, accepted_config(factory, settings))


def strategy_roles(label: str) -> tuple[str, ...]:
    """The roles strategy ``label`` calls: its defaults with any ``+`` switches on."""
    name, switches = parse_label(label)
    return make_strategy(name, **switches).role_names


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONFIRM_MARGIN",
    "DEFAULT_STRATEGY",
    "PRESETS",
    "PRESET_LABEL",
    "STRATEGIES",
    "CallOverrides",
    "CallPolicy",
    "CallWords",
    "Ending",
    "Evidence",
    "Freyr",
    "FunctionStrategy",
    "Gated",
    "Ledger",
    "ModelFailure",
    "Native",
    "Nlt",
    "PlanningPolicy",
    "PlanningStrategy",
    "Prompted",
    "Request",
    "Run",
    "RunStarter",
    "StrategyFactory",
    "StrategyModule",
    "ToolChoice",
    "ToolExecutor",
    "accepted_config",
    "build_strategy",
    "call_text",
    "default_strategy",
    "get_strategy",
    "load_strategies",
    "make_strategy",
    "parse_label",
    "register_strategy",
    "sentences",
    "setting_defaults",
    "setting_names",
    "strategy_label",
    "strategy_roles",
    "strategy_with",
    "unsupported_numbers",
    "waits_for_results",
    "watching_calls",
]
