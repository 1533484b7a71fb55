"""A compile's candidates: each one program, described by what it changes in the baseline.

A ``Candidate`` is a strategy label (the baseline's preset with its switches and margins), an
optional demo pool (``PoolSpec``: which roles keep one, how many demos each request is shown,
how they are chosen) and, with candidate models, a role -> model assignment. Its canonical JSON
keys its scored rows in the cache, so a resumed compile pays for nothing it scored before.

``toggled`` and ``with_settings`` build the neighbours a compile tries: one switch flipped, a
margin set. Combinations a strategy refuses (``abstain`` without ``confirm``, ``asks`` with
``calibrate``) are mended the way the switch docs describe rather than failed, so every
candidate is a program that runs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.schemas import RoleModel
from freyr_dspy.strategies import (
    get_strategy,
    make_strategy,
    parse_label,
    setting_defaults,
    setting_names,
    strategy_label,
)

__all__ = [
    "PLAN_ROLES",
    "Candidate",
    "PoolSpec",
    "label_settings",
    "switch_names",
    "toggled",
    "with_settings",
]

#: The roles that make the plan; a demo pool goes on these first.
PLAN_ROLES = ("intent", "asks", "confirm", "library", "tool_selection")

#: Settings that depend on another one: (setting, the one it needs on).
_NEEDS = (
    ("abstain", "confirm"),
    ("scored_confirm", "confirm"),
    ("refill", "confirm"),
)


class PoolSpec(BaseModel):
    """A demo pool on some roles: each request is shown ``k`` demos chosen from it."""

    model_config = ConfigDict(frozen=True)

    roles: tuple[str, ...]
    k: int = Field(default=3, ge=1)
    #: ``contrastive``: the request's own tools, nearest, one of another decision;
    #: ``nearest``: the nearest of all (``freyr_dspy.prompting._demo_pool``).
    select: Literal["contrastive", "nearest"] = "contrastive"

    def describe(self) -> str:
        """``3 contrastive demos (intent, confirm)``."""
        return f"{self.k} {self.select} demos ({', '.join(self.roles)})"


class Candidate(BaseModel):
    """One program a compile scores: a strategy label, maybe a demo pool and models."""

    model_config = ConfigDict(frozen=True)

    #: The strategy with every setting that differs from the strategy's defaults.
    strategy: str
    pool: PoolSpec | None = None
    #: Role -> model and sampling; None keeps the baseline's.
    assignment: dict[str, RoleModel] | None = None

    @property
    def compiled(self) -> bool:
        """Whether this candidate carries demos."""
        return self.pool is not None

    def canonical(self) -> str:
        """A stable JSON text: equal candidates, equal text."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def digest(self) -> str:
        """A short hash of ``canonical()``."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:12]

    def describe(self) -> str:
        """``freyr+split_calls, 3 contrastive demos (intent, confirm)``: for reports."""
        parts = [self.strategy]
        if self.pool is not None:
            parts.append(self.pool.describe())
        if self.assignment:
            parts.append(" ".join(f"{r}={m.model}" for r, m in sorted(self.assignment.items())))
        return ", ".join(parts)


def switch_names(label: str) -> tuple[str, ...]:
    """The on/off settings of the strategy of ``label`` (what a compile may flip)."""
    name, _ = parse_label(label)
    factory = get_strategy(name)
    defaults = setting_defaults(factory)
    return tuple(s for s in setting_names(factory) if isinstance(defaults.get(s), bool))


def label_settings(label: str) -> dict[str, Any]:
    """Every setting of ``label``'s strategy, the label's own over the defaults."""
    name, given = parse_label(label)
    return {**setting_defaults(get_strategy(name)), **given}


def toggled(label: str, switch: str, on: bool) -> str:
    """``label`` with ``switch`` on or off (mended), as a canonical label."""
    return with_settings(label, {switch: on})


def with_settings(label: str, settings: dict[str, Any]) -> str:
    """``label`` with ``settings`` changed (mended), as a canonical label."""
    name, _ = parse_label(label)
    return strategy_label(make_strategy(name, **_mended({**label_settings(label), **settings})))


def _mended(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with what a strategy would refuse switched off (see the module docstring)."""
    mended = dict(settings)
    for setting, needed in _NEEDS:
        if needed in mended and not mended[needed]:
            mended[setting] = False
    if mended.get("asks") and mended.get("calibrate"):
        mended["calibrate"] = False  # calibrate re-chooses the intent role's tool; asks has none
    if mended.get("abstain_margin") is not None and not (
        mended.get("abstain") and mended.get("scored_confirm")
    ):
        mended["abstain_margin"] = None
    if mended.get("confirm_margin") is not None and not mended.get("scored_confirm"):
        mended["confirm_margin"] = None
    return mended
