"""Turn an evaluation's unit results into the numbers a report shows (pure, JSON-ready).

Per benchmark, per case and per contestant: Steps % (successful steps of all planned steps;
a step an episode never reached counts as failed), input and output tokens per step run and
seconds per step run, each as the mean over runs with a 95 % t-interval. Then the paired
Wilcoxon tests between contestants (pairs = the same step of the same episode in the same
run; Bonferroni over the contestant pairs) with the steps each pair won and lost against each
other (an exact sign test), input tokens relative to ``native``, the
variance across inputs and runs, and per-step diagnostics.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from freyr_dspy.evaluation._runner import StepRecord
from freyr_dspy.evaluation._stats import (
    bonferroni,
    mean_ci,
    ratio,
    sign_test,
    variance_across_inputs,
    variance_across_runs,
    wilcoxon_paired,
)
from freyr_dspy.evaluation._units import UnitResult

__all__ = ["ALL_CASES", "METRICS", "aggregate_benchmark", "run_metrics"]

#: The metrics of the table, in column order (see ``run_metrics``).
METRICS: tuple[str, ...] = ("steps_pct", "tokens_in", "tokens_out", "seconds")
ALL_CASES = "all"
BASELINE = "native"

#: StepRecord field compared per step by the Wilcoxon test, per metric.
_STEP_FIELDS = {
    "steps_pct": "success",
    "tokens_in": "input_tokens",
    "tokens_out": "output_tokens",
    "seconds": "seconds",
}

StepKey = tuple[int, str, int]  # (run, episode, step index)


def aggregate_benchmark(units: Sequence[UnitResult], contestants: Sequence[str]) -> dict[str, Any]:
    """Aggregate the units of one benchmark.

    Args:
        units: every finished unit of the benchmark.
        contestants: contestant labels in report order.

    Returns:
        ``cases``, ``wilcoxon``, ``head_to_head``, ``token_ratio``, ``variance``,
        ``failures`` and ``steps``.
    """
    by_case = _group(units, lambda u: u.case)
    cases = list(by_case)
    groups = {case: by_case[case] for case in cases}
    if len(cases) > 1:
        groups[ALL_CASES] = list(units)
    table = {
        case: {
            label: case_metrics([u for u in group if u.key.strategy == label])
            for label in contestants
        }
        for case, group in groups.items()
    }
    values = {case: step_values(group, contestants) for case, group in groups.items()}
    return {
        "cases": table,
        "wilcoxon": wilcoxon_table(values, contestants),
        "head_to_head": head_to_head(values, contestants),
        "token_ratio": token_ratios(table, contestants),
        "variance": {
            label: _variances([u for u in units if u.key.strategy == label])
            for label in contestants
        },
        "failures": {
            label: failure_counts([u for u in units if u.key.strategy == label])
            for label in contestants
        },
        "steps": step_diagnostics(units, contestants),
    }


def case_metrics(units: Sequence[UnitResult]) -> dict[str, Any]:
    """Mean ± 95 % half-width over runs of every table metric, for one case and contestant.

    ``steps_pct_per_run`` keeps each run's Steps % (in run order): with two or three runs the
    interval says little, the runs themselves say more.
    """
    by_run = _group(units, lambda u: u.key.run)
    per_run = [run_metrics(by_run[run]) for run in sorted(by_run)]
    result: dict[str, Any] = {
        name: mean_ci([v[name] for v in per_run if not math.isnan(v[name])]).to_json()
        for name in METRICS
    }
    result["steps_pct_per_run"] = [v["steps_pct"] for v in per_run]
    result["runs"] = len(per_run)
    result["steps_per_run"] = sum(u.n_steps for u in units) / len(per_run) if per_run else 0
    return result


def run_metrics(units: Sequence[UnitResult]) -> dict[str, float]:
    """The table metrics of one run: Steps % over planned steps, costs per step run."""
    planned = sum(u.n_steps for u in units)
    records = [r for u in units for r in u.records]
    ran = len(records)

    def per_step(field: str) -> float:
        return sum(getattr(r, field) for r in records) / ran if ran else math.nan

    return {
        "steps_pct": 100 * sum(r.success for r in records) / planned if planned else math.nan,
        "tokens_in": per_step("input_tokens"),
        "tokens_out": per_step("output_tokens"),
        "seconds": per_step("seconds"),
    }


#: Per contestant, per metric, the value of every planned step (see ``step_values``).
StepValues = dict[str, dict[str, dict[StepKey, float]]]


def step_values(units: Sequence[UnitResult], contestants: Sequence[str]) -> StepValues:
    """The per-step values of each contestant's units, which the paired tests compare."""
    return {
        label: _step_values([u for u in units if u.key.strategy == label]) for label in contestants
    }


def wilcoxon_table(
    values_by_case: Mapping[str, StepValues], contestants: Sequence[str]
) -> list[dict[str, Any]]:
    """Paired Wilcoxon p-values per case, contestant pair and metric, Bonferroni-corrected.

    The family of the correction is the number of contestant pairs (the paper's protocol).
    """
    pairs = list(itertools.combinations(contestants, 2))
    rows: list[dict[str, Any]] = []
    for case, values in values_by_case.items():
        for metric in METRICS:
            raw = [_paired_p(values[a][metric], values[b][metric]) for a, b in pairs]
            corrected = bonferroni([p for p, _ in raw], comparisons=len(pairs))
            rows.extend(
                {
                    "case": case,
                    "a": a,
                    "b": b,
                    "metric": metric,
                    "pairs": n,
                    "p": p,
                    "p_bonferroni": pc,
                }
                for (a, b), (p, n), pc in zip(pairs, raw, corrected, strict=True)
            )
    return rows


def head_to_head(
    values_by_case: Mapping[str, StepValues], contestants: Sequence[str]
) -> list[dict[str, Any]]:
    """Per case and contestant pair: the steps each completed where the other did not.

    Pairs are the same step of the same episode in the same run, as for the Wilcoxon test;
    a step counts as won by ``a`` when its success is higher than ``b``'s. ``p`` is the exact
    sign test of the wins against the losses, ``p_bonferroni`` corrected over the pairs.
    """
    pairs = list(itertools.combinations(contestants, 2))
    rows: list[dict[str, Any]] = []
    for case, values in values_by_case.items():
        success = {label: values[label]["steps_pct"] for label in contestants}
        counts = [_wins_and_losses(success[a], success[b]) for a, b in pairs]
        raw = [sign_test(won, lost) for won, lost, _ in counts]
        corrected = bonferroni(raw, comparisons=len(pairs))
        rows.extend(
            {
                "case": case,
                "a": a,
                "b": b,
                "a_won": won,
                "b_won": lost,
                "pairs": n,
                "p": p,
                "p_bonferroni": pc,
            }
            for (a, b), (won, lost, n), p, pc in zip(pairs, counts, raw, corrected, strict=True)
        )
    return rows


def _wins_and_losses(
    a: Mapping[StepKey, float], b: Mapping[StepKey, float]
) -> tuple[int, int, int]:
    shared = set(a) & set(b)
    won = sum(1 for k in shared if a[k] > b[k])
    lost = sum(1 for k in shared if a[k] < b[k])
    return won, lost, len(shared)


def _step_values(units: Sequence[UnitResult]) -> dict[str, dict[StepKey, float]]:
    """Per metric, the value of every planned step; unreached steps have success 0 only."""
    values: dict[str, dict[StepKey, float]] = {m: {} for m in METRICS}
    for unit in units:
        for index in range(unit.n_steps):
            key = (unit.key.run, unit.key.episode, index)
            if index >= len(unit.records):
                values["steps_pct"][key] = 0.0
                continue
            record = unit.records[index]
            for metric, field in _STEP_FIELDS.items():
                values[metric][key] = float(getattr(record, field))
    return values


def _paired_p(a: Mapping[StepKey, float], b: Mapping[StepKey, float]) -> tuple[float | None, int]:
    shared = sorted(set(a) & set(b))
    return wilcoxon_paired([a[k] for k in shared], [b[k] for k in shared]), len(shared)


def token_ratios(
    table: Mapping[str, Mapping[str, Mapping[str, Any]]], contestants: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """Input tokens per step of each contestant as a fraction of ``native``'s, per case."""
    if BASELINE not in contestants:
        return {}
    return {
        label: {
            case: ratio(row[label]["tokens_in"]["mean"], row[BASELINE]["tokens_in"]["mean"])
            for case, row in table.items()
        }
        for label in contestants
        if label != BASELINE
    }


def _variances(units: Sequence[UnitResult]) -> dict[str, float]:
    by_input: dict[tuple[str, int], list[float]] = defaultdict(list)
    for unit in units:
        for index in range(unit.n_steps):
            success = unit.records[index].success if index < len(unit.records) else 0.0
            by_input[(unit.key.episode, index)].append(success)
    return {
        "across_inputs": variance_across_inputs(by_input),
        "across_runs": variance_across_runs(by_input),
    }


def failure_counts(units: Iterable[UnitResult]) -> dict[str, int]:
    """How often each failure kind occurred (steps with success < 1)."""
    kinds = Counter(r.failure_kind or "unknown" for u in units for r in u.records if r.success < 1)
    return dict(kinds.most_common())


def step_diagnostics(
    units: Sequence[UnitResult], contestants: Sequence[str]
) -> list[dict[str, Any]]:
    """Per contestant and step: success rate over runs, failure kinds, expected vs produced.

    Steps never reached (an iterative episode stopped before them) count as ``not_reached``.
    """
    rows = []
    for label in contestants:
        steps: dict[tuple[str, int], list[StepRecord | None]] = defaultdict(list)
        names: dict[tuple[str, int], tuple[str, str]] = {}
        for unit in (u for u in units if u.key.strategy == label):
            for index in range(unit.n_steps):
                record = unit.records[index] if index < len(unit.records) else None
                steps[(unit.key.episode, index)].append(record)
                names[(unit.key.episode, index)] = (unit.case, unit.step_id(index))
        for (episode, index), records in steps.items():
            case, step = names[(episode, index)]
            row = {"strategy": label, "case": case, "episode": episode, "step": step}
            rows.append({**row, **_step_row(records)})
    return rows


def _step_row(records: Sequence[StepRecord | None]) -> dict[str, Any]:
    reached = [r for r in records if r is not None]
    failed = [r for r in reached if r.success < 1]
    kinds = Counter(r.failure_kind or "unknown" for r in failed)
    if len(reached) < len(records):
        kinds["not_reached"] = len(records) - len(reached)
    example = failed[0] if failed else None
    return {
        "success_rate": sum(r.success for r in reached) / len(records) if records else math.nan,
        "runs": len(records),
        "reached": len(reached),
        "failure_kinds": dict(kinds.most_common()),
        "expected": _diagnostic(example, "expected") if example else None,
        "produced": _diagnostic(example, "produced") if example else None,
    }


def _diagnostic(record: StepRecord, prefix: str) -> Any:
    """``expected``/``produced`` from the step's diagnostics (``expected_intents`` too).

    Without a ``produced`` entry, the names of the tools the program called stand in.
    """
    for key, value in record.diagnostics.items():
        if key == prefix or key.startswith(f"{prefix}_"):
            return value
    return [call.get("tool") for call in record.calls] if prefix == "produced" else None


def _group(
    units: Iterable[UnitResult], key: Callable[[UnitResult], Any]
) -> dict[Any, list[UnitResult]]:
    groups: dict[Any, list[UnitResult]] = {}
    for unit in units:
        groups.setdefault(key(unit), []).append(unit)
    return groups
