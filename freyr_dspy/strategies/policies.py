"""The switches of the tool-calling strategies, as small frozen policies the strategy holds.

``PlanningPolicy`` says how FREYR's plan is made and checked; ``CallPolicy`` says how a
planned tool becomes calls and how a failed call is retried, and every strategy that calls
tools through ``freyr_dspy.strategies.retry.loop`` holds one (``freyr``, ``nlt``, and ``gated``
through its inner strategy). A strategy's settings are the fields of its policies, and its
``config()`` the fields that differ from their defaults (``changed_settings``), so the
artifacts saved before the policies existed describe the same strategies.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from freyr_dspy.errors import ConfigError

__all__ = ["CallPolicy", "PlanningPolicy", "changed_settings"]


@dataclass(frozen=True)
class PlanningPolicy:
    """How FREYR plans: which tools, and whether and how the plan is checked.

    Attributes:
        confirm: check a plan naming several tools with the ``confirm`` role.
        calibrate: re-choose the plan's first tool by calibrated likelihood.
        replan: plan once more when the plan's first call fails every attempt.
        abstain: check a plan of one tool with ``confirm`` too (needs ``confirm``).
        scored_confirm: read ``confirm``'s verdicts from scored likelihoods, with a margin.
        refill: a planned entry ``confirm`` drops may become one more call of the kept tool
            planned before it, kept only when it differs in values the request states.
        abstain_margin: the scored margin for a plan of one tool (``abstain`` and
            ``scored_confirm``); None: the margin of every scored verdict.
        asks: plan with the ``asks`` role (each thing asked, quoted, mapped to a tool or
            none) instead of the intent role.
        rounds: planning rounds a request may take: after calls that returned results, the
            plan is made again with the results shown, and calls it still lacks (one whose
            value comes from a result) are made, up to this many rounds in all (1: never).
    """

    confirm: bool = True
    calibrate: bool = False
    replan: bool = False
    abstain: bool = False
    scored_confirm: bool = False
    refill: bool = False
    abstain_margin: float | None = None
    asks: bool = False
    rounds: int = 2

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ConfigError(f"freyr: rounds is at least 1 (one plan), got {self.rounds}")
        for name in ("abstain", "scored_confirm", "refill"):
            if getattr(self, name) and not self.confirm:
                raise ConfigError(f"freyr: {name} checks plans with the confirm role; keep confirm")
        if self.asks and self.calibrate:
            raise ConfigError(
                "freyr: calibrate re-chooses the intent role's first tool; asks plans without it"
            )
        if self.abstain_margin is not None and not (self.abstain and self.scored_confirm):
            raise ConfigError(
                "freyr: abstain_margin scores one-tool plans; needs abstain and scored_confirm"
            )


@dataclass(frozen=True)
class CallPolicy:
    """How planned tools become calls, and how a failed call is retried.

    Attributes:
        exclude_blamed: a retry may not write again a value the last error blamed.
        choose_listed: a blamed argument must take one of the values its error lists.
        require_stated: make no call whose required text values the request never gave.
        split_calls: any planned tool may be written as several calls.
    """

    exclude_blamed: bool = False
    choose_listed: bool = False
    require_stated: bool = False
    split_calls: bool = False

    @property
    def reads_blame(self) -> bool:
        """Whether a failed call's error is read for the arguments it blames."""
        return self.exclude_blamed or self.choose_listed


def changed_settings(*policies: PlanningPolicy | CallPolicy) -> dict[str, Any]:
    """The fields of ``policies`` that differ from their defaults, as one flat dict."""
    changed: dict[str, Any] = {}
    for policy in policies:
        defaults = {f.name: f.default for f in fields(policy)}
        changed |= {k: v for k, v in asdict(policy).items() if v != defaults[k]}
    return changed
