"""What a compile study varies around its baseline program, and one point of it.

The baseline is the program a user already gets for free: the model's preset, uncompiled. A
configuration (``ProgramConfig``) changes it along these dimensions, each an Optuna parameter
with a stable name:

* ``switch.<name>``: each switch of the strategy (``freyr strategies`` lists them), on or off;
* ``demos``: few-shot demos per role (0 to 4), and when there are any, ``optimizer`` (how
  they are chosen: ``labeled``, ``nearest``, ``misses``, ``bootstrap``) and ``demo_roles``
  (``plan``: the planning roles only; ``deciding``: every role that decides the calls);
* with candidate models, ``model.<role>`` and sampling (``freyr_dspy.search._space``).

Combinations a strategy refuses (``abstain`` without ``confirm``) are mended the way the
switch docs describe rather than failed, so every suggestion is a program that runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from freyr_dspy.schemas import RoleModel
from freyr_dspy.search._space import Picker, SearchSpace, suggest
from freyr_dspy.strategies import (
    get_strategy,
    make_strategy,
    parse_label,
    setting_defaults,
    setting_names,
    strategy_label,
)

__all__ = [
    "DEMO_OPTIMIZERS",
    "DemoRoles",
    "ProgramConfig",
    "ProgramSpace",
    "suggest_program",
    "switch_names",
]

#: The demo optimizers a study chooses among by default: none needs a model to write
#: instructions; ``misses`` and ``bootstrap`` run the program (or its teacher) on train rows.
DEMO_OPTIMIZERS = ("labeled", "nearest", "misses", "bootstrap")

DemoRoles = Literal["plan", "deciding"]

#: Settings that depend on another one: (setting, the one it needs on).
_NEEDS = (
    ("abstain", "confirm"),
    ("scored_confirm", "confirm"),
    ("refill", "confirm"),
)


@dataclass(frozen=True)
class ProgramSpace:
    """The dimensions a compile study searches (see the module docstring).

    Args:
        baseline: the baseline's strategy label (the model's preset).
        switches: the switches searched (on or off); the others keep the baseline's value.
        optimizers: the demo optimizers to choose among.
        max_demos: most demos per role (0: no demos are searched).
        demo_roles: which roles may keep demos.
        models: candidate models and sampling per role (None: the baseline's models).
    """

    baseline: str
    switches: tuple[str, ...] = ()
    optimizers: tuple[str, ...] = DEMO_OPTIMIZERS
    max_demos: int = 4
    demo_roles: tuple[DemoRoles, ...] = ("plan", "deciding")
    models: SearchSpace | None = None
    #: Settings of the baseline the label carries (derived).
    settings: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """A JSON description (stored with the study, hashed into its name)."""
        return {
            "baseline": self.baseline,
            "switches": list(self.switches),
            "optimizers": list(self.optimizers),
            "max_demos": self.max_demos,
            "demo_roles": list(self.demo_roles),
            "models": self.models.describe() if self.models is not None else None,
        }


class ProgramConfig(BaseModel):
    """One program of a compile study: a strategy label, its demos and (maybe) its models."""

    model_config = ConfigDict(frozen=True)

    #: The strategy with every switch that differs from the strategy's defaults.
    strategy: str
    demos: int = 0
    optimizer: str | None = None
    demo_roles: DemoRoles = "plan"
    #: Role -> model and sampling; None keeps the baseline's.
    assignment: dict[str, RoleModel] | None = None

    @property
    def compiled(self) -> bool:
        """Whether this configuration has demos (its programs differ by fold)."""
        return self.demos > 0 and self.optimizer is not None

    def canonical(self) -> str:
        """A stable JSON text: equal configurations, equal text."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def digest(self) -> str:
        """A short hash of ``canonical()``."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:12]

    def describe(self) -> str:
        """``freyr+asks, 3 nearest demos (plan)``: for reports."""
        demos = (
            f", {self.demos} {self.optimizer} demos ({self.demo_roles})" if self.compiled else ""
        )
        models = ""
        if self.assignment:
            models = ", " + " ".join(f"{r}={m.model}" for r, m in self.assignment.items())
        return f"{self.strategy}{demos}{models}"


def switch_names(label: str) -> tuple[str, ...]:
    """The on/off settings of the strategy of ``label`` (what a study may switch)."""
    name, _ = parse_label(label)
    factory = get_strategy(name)
    defaults = setting_defaults(factory)
    return tuple(s for s in setting_names(factory) if isinstance(defaults.get(s), bool))


def suggest_program(picker: Picker, space: ProgramSpace) -> ProgramConfig:
    """Choose one configuration of ``space`` with ``picker`` (the baseline's values by default)."""
    name, given = parse_label(space.baseline)
    settings = {**setting_defaults(get_strategy(name)), **given}
    for switch in space.switches:
        settings[switch] = picker.categorical(
            f"switch.{switch}", [False, True], bool(settings.get(switch))
        )
    strategy = strategy_label(make_strategy(name, **_mended(settings)))
    demos = picker.int("demos", 0, space.max_demos, 0) if space.max_demos > 0 else 0
    optimizer: str | None = None
    roles: DemoRoles = "plan"
    if demos:
        optimizer = _pick(picker, "optimizer", space.optimizers)
        roles = _pick(picker, "demo_roles", space.demo_roles)
    assignment = suggest(picker, space.models).assignment if space.models is not None else None
    return ProgramConfig(
        strategy=strategy,
        demos=demos if optimizer else 0,
        optimizer=optimizer,
        demo_roles=roles,
        assignment=assignment,
    )


def _pick(picker: Picker, name: str, choices: tuple[Any, ...]) -> Any:
    return choices[0] if len(choices) == 1 else picker.categorical(name, choices, choices[0])


def _mended(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with what a strategy would refuse switched off (see the module docstring)."""
    mended = dict(settings)
    for setting, needed in _NEEDS:
        if needed in mended and not mended[needed]:
            mended[setting] = False
    if mended.get("asks") and mended.get("calibrate"):
        mended["calibrate"] = False  # calibrate re-chooses the intent role's tool; asks has none
    margin_ok = mended.get("abstain") and mended.get("scored_confirm")
    if mended.get("abstain_margin") is not None and not margin_ok:
        mended["abstain_margin"] = None
    return mended
