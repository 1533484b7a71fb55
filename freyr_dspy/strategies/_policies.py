"""The switches of the tool-calling strategies, as small frozen policies the strategy holds.

``PlanningPolicy`` says how FREYR's plan is made and checked; ``CallPolicy`` says how a
planned tool becomes calls, how its arguments are checked and how often a failed call is
retried. Every strategy holds a ``CallPolicy`` (``StrategyModule.calling``); ``gated`` holds
its inner strategy's. A strategy is built from its policies
(``Freyr(planning=PlanningPolicy(abstain=True))``); a label's flat settings
(``freyr+abstain``) are packed into them by ``policy_settings``, and a strategy's ``config()``
is the fields that differ from their defaults (``changed_settings``), so the artifacts saved
before the policies existed describe the same strategies.

``max_retries`` and ``ground_arguments`` are the program's settings (``FreyrProgram``, recorded
in its spec), held in the call policy where the calls are made: they are not strategy
settings, so no label or strategy config carries them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from freyr_dspy.errors import ConfigError

__all__ = ["CallPolicy", "PlanningPolicy", "changed_settings", "policy_settings"]

#: Call-policy fields the program sets (``FreyrProgram(max_retries=..., ground_arguments=...)``).
PROGRAM_SETTINGS = ("max_retries", "ground_arguments")


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
        confirm_margin: the scored margin for a plan of several tools (``scored_confirm``);
            None: ``CONFIRM_MARGIN``. ``freyr compile`` fits both to a user's rows.
        asks: plan with the ``asks`` role (each thing asked, quoted, mapped to a tool or
            none) instead of the intent role.
        rounds: planning rounds a request may take: after calls that returned results, the
            plan is made again with the results shown, and calls it still lacks (one whose
            value comes from a result) are made, up to this many rounds in all (1: never).
        lone_tool: when one action is offered, plan it without asking the planning role and
            let the ``abstain`` check decide whether it is asked for (needs ``abstain``).
        check_alone: the ``confirm`` check reads the message without the earlier turns of a
            conversation, as its scored margins were fitted (needs ``confirm``).
    """

    confirm: bool = True
    calibrate: bool = False
    replan: bool = False
    abstain: bool = False
    scored_confirm: bool = False
    refill: bool = False
    abstain_margin: float | None = None
    confirm_margin: float | None = None
    asks: bool = False
    rounds: int = 2
    lone_tool: bool = False
    check_alone: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "rounds", int(self.rounds))  # a label writes numbers as floats
        if self.rounds < 1:
            raise ConfigError(f"freyr: rounds is at least 1 (one plan), got {self.rounds}")
        if self.lone_tool and not self.abstain:
            raise ConfigError("freyr: lone_tool lets the abstain check decide; needs abstain")
        for name in ("abstain", "scored_confirm", "refill", "check_alone"):
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
        if self.confirm_margin is not None and not self.scored_confirm:
            raise ConfigError("freyr: confirm_margin scores the confirm role; needs scored_confirm")


@dataclass(frozen=True)
class CallPolicy:
    """How planned tools become calls, how their arguments are checked, how often retried.

    Attributes:
        exclude_blamed: a retry may not write again a value the last error blamed.
        choose_listed: a blamed argument must take one of the values its error lists.
        require_stated: make no call whose required text values the request never gave.
        split_calls: any planned tool may be written as several calls.
        split_listed: as ``split_calls``, on requests that may list several values
            ("Oslo and Paris", "a, b, c", "each", "both") only: the others keep one call's
            shorter answer.
        max_retries: retries of a failed call with its error as feedback (the program's).
        ground_arguments: leave out optional values nobody stated, and refuse once a value
            copied from a description's example (the program's).
    """

    exclude_blamed: bool = False
    choose_listed: bool = False
    require_stated: bool = False
    split_calls: bool = False
    split_listed: bool = False
    max_retries: int = 3
    ground_arguments: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_retries", int(self.max_retries))
        if self.max_retries < 0:
            raise ConfigError(f"max_retries is at least 0, got {self.max_retries}")

    @property
    def reads_blame(self) -> bool:
        """Whether a failed call's error is read for the arguments it blames."""
        return self.exclude_blamed or self.choose_listed


Policy = PlanningPolicy | CallPolicy


def changed_settings(*policies: Policy) -> dict[str, Any]:
    """The strategy settings of ``policies`` that differ from their defaults, as one flat dict.

    The program's settings (``PROGRAM_SETTINGS``) are left out: the program records them.
    """
    changed: dict[str, Any] = {}
    for policy in policies:
        defaults = policy_settings(type(policy))
        changed |= {k: v for k, v in asdict(policy).items() if k in defaults and v != defaults[k]}
    return changed


def policy_settings(policy: type[Policy]) -> dict[str, Any]:
    """The strategy settings a policy class holds, each with its default (program's left out)."""
    return {f.name: f.default for f in fields(policy) if f.name not in PROGRAM_SETTINGS}


def packed(policy: type[Policy], settings: Mapping[str, Any]) -> Policy:
    """A ``policy`` made of the entries of flat ``settings`` that are its fields."""
    names = {f.name for f in fields(policy)}
    return policy(**{k: v for k, v in settings.items() if k in names})
