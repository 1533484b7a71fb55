"""What a compile tries after the baseline pass, chosen from what the baseline got wrong.

Each stage proposes a few neighbours of the best program so far, each with the reason it was
proposed; the compile scores them (cheapest first, with successive halving) and keeps one
only when it wins rows:

* ``margins``: the scored-check margins fitted to the logged verdicts (``_margins``);
* ``switches``: one switch flipped, where the baseline's failures show what it would fix -
  several values of one tool planned as one call (``split_calls``, ``refill``), asks of
  different tools missed (``asks``), calls nobody asked for (``require_stated``), the wrong
  tool (``replan``, ``calibrate`` off), retries writing the blamed value again
  (``exclude_blamed``). A switch nobody's rows need is never tried;
* ``demos``: a contrastive demo pool of the user's rows on the planning roles, and on the
  parameters role too when wrong argument values are among the baseline's failures (a
  toolbox's own ID formats, units and enum spellings, which only the user's rows show);
* ``models``: one role played by another candidate model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from freyr_dspy.compiling._candidates import (
    PLAN_ROLES,
    Candidate,
    PoolSpec,
    label_settings,
    switch_names,
    toggled,
    with_settings,
)
from freyr_dspy.compiling._margins import fit_margin, margin_rows
from freyr_dspy.compiling._rows import TrainingRow
from freyr_dspy.evaluation import StepRecord
from freyr_dspy.schemas import RoleModel

__all__ = [
    "STAGES",
    "Proposal",
    "demo_proposals",
    "margin_proposals",
    "model_proposals",
    "switch_proposals",
]

#: The stages, in the order a compile runs them.
STAGES = ("margins", "switches", "demos", "models")

#: A failure pattern proposes a switch only when this share of the rows (and 2 rows) shows it.
MIN_SHARE = 0.05
#: Most switches one compile tries.
MOST_SWITCHES = 3


@dataclass(frozen=True)
class Proposal:
    """A candidate to score, the stage that proposed it and why."""

    candidate: Candidate
    stage: str
    reason: str


Evidence = Mapping[str, StepRecord]


def margin_proposals(
    current: Candidate, rows: Sequence[TrainingRow], records: Evidence
) -> list[Proposal]:
    """The scored-check margins fitted to the logged verdicts, one proposal each, then both."""
    settings = label_settings(current.strategy)
    if not settings.get("scored_confirm"):
        return []
    fitted = []
    if settings.get("abstain"):
        one = fit_margin(
            "abstain_margin",
            margin_rows(rows, dict(records), several=False),
            settings.get("abstain_margin"),
        )
        fitted.append(one)
    several = fit_margin(
        "confirm_margin",
        margin_rows(rows, dict(records), several=True),
        settings.get("confirm_margin"),
    )
    fitted.append(several)
    found = [f for f in fitted if f is not None]
    proposals = [
        Proposal(
            current.model_copy(
                update={"strategy": with_settings(current.strategy, {f.setting: f.value})}
            ),
            "margins",
            f.reason(),
        )
        for f in found
    ]
    if len(found) == 2:
        both = with_settings(current.strategy, {f.setting: f.value for f in found})
        reason = "; ".join(f.reason() for f in found)
        proposals.insert(
            0, Proposal(current.model_copy(update={"strategy": both}), "margins", reason)
        )
    return proposals


@dataclass(frozen=True)
class SwitchRule:
    """A failure pattern a switch addresses: the switch, its value, and the pattern."""

    switch: str
    on: bool
    pattern: str
    shows: Callable[[TrainingRow, StepRecord], bool]


def _made(record: StepRecord) -> Counter[str]:
    return Counter(str(c.get("tool")) for c in record.calls if (c.get("outcome") or {}).get("ok"))


def _fewer_calls_of_a_repeated_tool(row: TrainingRow, record: StepRecord) -> bool:
    wanted = Counter(row.gold)
    made = _made(record)
    return any(n > 1 and made[tool] < n for tool, n in wanted.items())


def _missed_a_tool_of_several(row: TrainingRow, record: StepRecord) -> bool:
    wanted = set(row.gold)
    return len(wanted) > 1 and not wanted <= set(_made(record))


def _called_unasked(row: TrainingRow, record: StepRecord) -> bool:
    return record.failure_kind == "extra-call"


def _wrong_tool(row: TrainingRow, record: StepRecord) -> bool:
    return record.failure_kind == "wrong-tool"


def _retried_arguments(row: TrainingRow, record: StepRecord) -> bool:
    retried = any(int(c.get("attempts") or 1) > 1 for c in record.calls)
    return record.failure_kind == "arguments" and retried


_REPEATED = "ask one tool for several values, fewer calls made"
_WRONG_TOOL = "got the wrong tool"

#: The failure patterns, each with the switch that addresses it.
RULES = (
    SwitchRule("split_calls", True, _REPEATED, _fewer_calls_of_a_repeated_tool),
    SwitchRule("refill", True, _REPEATED, _fewer_calls_of_a_repeated_tool),
    SwitchRule("asks", True, "ask for several tools, one missed", _missed_a_tool_of_several),
    SwitchRule("require_stated", True, "got a call nobody asked for", _called_unasked),
    SwitchRule("replan", True, _WRONG_TOOL, _wrong_tool),
    SwitchRule("calibrate", False, _WRONG_TOOL, _wrong_tool),
    SwitchRule("exclude_blamed", True, "retried and wrote wrong values again", _retried_arguments),
)


def switch_proposals(
    current: Candidate,
    rows: Sequence[TrainingRow],
    records: Evidence,
    allowed: Sequence[str] | None = None,
) -> list[Proposal]:
    """Switches the baseline's failures call for (see the module docstring), most rows first.

    ``allowed`` limits the switches (None: every switch of the strategy).
    """
    settings = label_settings(current.strategy)
    names = set(switch_names(current.strategy) if allowed is None else allowed)
    least = max(2, math.ceil(MIN_SHARE * len(rows)))
    found: list[tuple[int, Proposal, str]] = []
    for rule in RULES:
        if rule.switch not in names or bool(settings.get(rule.switch)) == rule.on:
            continue
        shown = sum(1 for row in rows if rule.shows(row, records[row.id]))
        label = toggled(current.strategy, rule.switch, rule.on)
        if shown < least or label == current.strategy:
            continue
        flip = rule.switch if rule.on else f"-{rule.switch}"
        reason = f"{flip}: {shown} rows {rule.pattern}"
        proposal = Proposal(current.model_copy(update={"strategy": label}), "switches", reason)
        found.append((shown, proposal, rule.pattern))
    return _one_per_failure_first(found)[:MOST_SWITCHES]


def _one_per_failure_first(found: list[tuple[int, Proposal, str]]) -> list[Proposal]:
    """Most rows first, but one switch per failure pattern before a second for any.

    Two switches for the wrong tool (``replan``, ``-calibrate``) must not crowd out the one
    for calls of one tool missed: the patterns are distinct failures, the switches alternatives.
    """
    ranked = sorted(found, key=lambda item: -item[0])
    seen: set[str] = set()
    first: list[Proposal] = []
    second: list[Proposal] = []
    for _, proposal, pattern in ranked:
        (second if pattern in seen else first).append(proposal)
        seen.add(pattern)
    unique = {p.candidate.strategy: p for p in [*first, *second]}
    return list(unique.values())


def demo_proposals(
    current: Candidate,
    rows: Sequence[TrainingRow],
    records: Evidence,
    roles: Sequence[str],
    k: int,
) -> list[Proposal]:
    """A contrastive pool on the planning roles, and one with the parameters role too.

    The one with parameters demos comes first when wrong argument values are a third or more
    of the baseline's failures (the user's conventions are what it gets wrong), and is only
    proposed when they are among them at all.
    """
    if k <= 0:
        return []
    plan = tuple(r for r in roles if r in PLAN_ROLES)
    failures = [records[row.id].failure_kind for row in rows if records[row.id].success < 1.0]
    arguments = sum(1 for kind in failures if kind == "arguments")
    least = max(2, math.ceil(MIN_SHARE * len(rows)))
    proposals = []
    if plan:
        spec = PoolSpec(roles=plan, k=k)
        reason = f"{len(rows)} rows as demos of their own toolbox on the planning roles"
        proposals.append(Proposal(current.model_copy(update={"pool": spec}), "demos", reason))
    if "parameters" in roles and arguments >= least:
        spec = PoolSpec(roles=(*plan, "parameters"), k=k)
        reason = f"{arguments} rows with wrong argument values: demos of the same tool's calls"
        proposal = Proposal(current.model_copy(update={"pool": spec}), "demos", reason)
        first = 3 * arguments >= len(failures)
        proposals.insert(0 if first else len(proposals), proposal)
    return proposals


def model_proposals(
    current: Candidate,
    models: Mapping[str, RoleModel],
    candidates: Mapping[str, Sequence[RoleModel]],
) -> list[Proposal]:
    """One role on another candidate model each (``models``: the current assignment)."""
    assignment = dict(current.assignment or models)
    proposals = []
    for role, options in candidates.items():
        for option in options:
            if role not in assignment or assignment[role] == option:
                continue
            swapped = {**assignment, role: option}
            reason = f"{role} on {option.model} instead of {assignment[role].model}"
            proposals.append(
                Proposal(current.model_copy(update={"assignment": swapped}), "models", reason)
            )
    return proposals
