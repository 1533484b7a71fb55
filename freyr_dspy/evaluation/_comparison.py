"""Contestants measured in separate ``freyr eval --out`` files, compared step by step.

A new strategy switch is often measured after its baseline: rather than re-running the
baseline, run only the new contestant with the same benchmark, model, sampling and runs, and
pair its steps with the stored ones (``freyr eval compare``). A pair is the same step of the
same episode in the same run, and a step an episode never reached counts as failed, as in
``freyr eval``'s own report. The files must agree on everything but the contestants, or the
pairs would compare two set-ups; an eval file does not record the commit it ran on, so the
caller checks that. Prefix caching and thread timing can still make a contestant's samples
differ between processes, so a paired re-run is a weaker control than one run.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.evaluation._report import read_report
from freyr_dspy.evaluation._stats import bonferroni, sign_test, wilcoxon_paired

__all__ = ["compare_reports", "render_comparison"]

#: Config entries that must match for steps of two files to be paired.
SAME_SETUP = (
    "benchmarks",
    "mode",
    "limit",
    "runs",
    "default_model",
    "model_specs",
    "sampling_specs",
    "api_base",
    "program_files",
    "extra",
)

StepKey = tuple[str, int, str, str]  # (benchmark, run, episode, step)
Record = dict[str, Any]  # one step record of an eval --out file


@dataclass
class Contestant:
    """One contestant's planned steps and the records of those it reached."""

    planned: set[StepKey] = field(default_factory=set)
    records: dict[StepKey, Record] = field(default_factory=dict)

    def success(self, key: StepKey) -> float:
        """A step's success; 0 for a step its episode never reached (as ``freyr eval`` counts)."""
        record = self.records.get(key)
        return float(record["success"]) if record else 0.0


@dataclass(frozen=True)
class Comparison:
    """What ``compare_reports`` found: the shared set-up, a row per contestant, a row per pair."""

    files: tuple[str, ...]
    setup: dict[str, Any]
    contestants: dict[str, dict[str, Any]]
    pairs: list[dict[str, Any]]

    def to_json(self, code: str) -> dict[str, Any]:
        """The comparison as JSON, with ``code``: the commit it was made on (the files lack it)."""
        return {
            "files": list(self.files),
            "compared_on": code,
            "setup": self.setup,
            "contestants": self.contestants,
            "pairs": self.pairs,
        }


def compare_reports(paths: Sequence[Path]) -> Comparison:
    """Pair the steps of the contestants of several eval ``--out`` files.

    Raises:
        ConfigError: the files were measured with another set-up, or share a contestant.
        DataError: a file is not an eval ``--out`` file.
    """
    setup, by_contestant = load_contestants(paths)
    rows = {label: contestant_row(contestant) for label, contestant in by_contestant.items()}
    return Comparison(tuple(p.name for p in paths), setup, rows, pair_rows(by_contestant))


def load_contestants(paths: Sequence[Path]) -> tuple[dict[str, Any], dict[str, Contestant]]:
    """The shared set-up of the files and their contestants.

    Raises:
        ConfigError: the files were measured with another set-up, or share a contestant.
        DataError: a file is not an eval ``--out`` file.
    """
    setup: dict[str, Any] | None = None
    contestants: dict[str, Contestant] = {}
    for path in paths:
        report = read_report(path)
        this = {key: report["config"].get(key) for key in SAME_SETUP}
        setup = this if setup is None else setup
        differing = [key for key in SAME_SETUP if this[key] != setup[key]]
        if differing:
            raise ConfigError(f"{path}: measured with another {', '.join(differing)}")
        try:
            _add_report(contestants, report, path)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(path, None, f"a step record lacks or garbles {exc}") from exc
    return setup or {}, contestants


def _add_report(contestants: dict[str, Contestant], report: Mapping[str, Any], path: Path) -> None:
    planned = _planned(report)
    labels_here = {r["strategy"] for r in report["records"]} | set(planned)
    if labels_here & set(contestants):
        raise ConfigError(f"{path}: {sorted(labels_here & set(contestants))} in two files")
    for label, keys in planned.items():
        contestants.setdefault(label, Contestant()).planned |= keys
    for record in report["records"]:
        key = (record["benchmark"], record["run"], record["episode"], record["step"])
        contestant = contestants.setdefault(record["strategy"], Contestant())
        contestant.records[key] = record
        contestant.planned.add(key)


def _planned(report: Mapping[str, Any]) -> dict[str, set[StepKey]]:
    """Per contestant, every step the report planned, reached or not."""
    runs = range(int(report["config"].get("runs") or 1))
    planned: dict[str, set[StepKey]] = {}
    for benchmark, summary in report.get("benchmarks", {}).items():
        for step in summary.get("steps", []):
            keys = {(benchmark, run, step["episode"], step["step"]) for run in runs}
            planned.setdefault(step["strategy"], set()).update(keys)
    return planned


def contestant_row(contestant: Contestant) -> dict[str, Any]:
    """Steps % over the planned steps; tokens and seconds over the steps reached."""
    reached = list(contestant.records.values())
    return {
        "steps": len(contestant.planned),
        "reached": len(reached),
        "steps_pct": 100 * statistics.fmean(map(contestant.success, contestant.planned)),
        "input_tokens_mean": statistics.fmean(r["input_tokens"] for r in reached),
        "output_tokens_mean": statistics.fmean(r["output_tokens"] for r in reached),
        "seconds_median": statistics.median(r["seconds"] for r in reached),
    }


def pair_rows(contestants: Mapping[str, Contestant]) -> list[dict[str, Any]]:
    """Every contestant pair: steps each did better, sign and Wilcoxon tests."""
    rows: list[dict[str, Any]] = []
    for a, b in itertools.combinations(sorted(contestants), 2):
        shared = sorted(contestants[a].planned & contestants[b].planned)
        success_a = [contestants[a].success(key) for key in shared]
        success_b = [contestants[b].success(key) for key in shared]
        won = sum(x > y for x, y in zip(success_a, success_b, strict=True))
        lost = sum(x < y for x, y in zip(success_a, success_b, strict=True))
        rows.append(
            {
                "a": a,
                "b": b,
                "pairs": len(shared),
                "a_won": won,
                "b_won": lost,
                "sign_p": sign_test(won, lost),
                "wilcoxon_p": wilcoxon_paired(success_a, success_b),
            }
        )
    corrected = bonferroni([row["wilcoxon_p"] for row in rows], comparisons=len(rows))
    for row, p in zip(rows, corrected, strict=True):
        row["wilcoxon_p_bonferroni"] = p
    return rows


def render_comparison(comparison: Comparison) -> str:
    """The comparison as two plain-text tables."""
    lines = ["contestant | steps | Steps % | input tok/step | output tok/step | s/step (median)"]
    ranked = sorted(comparison.contestants.items(), key=lambda item: -item[1]["steps_pct"])
    for label, row in ranked:
        lines.append(
            f"{label} | {row['steps']} | {row['steps_pct']:.1f} | {row['input_tokens_mean']:.0f}"
            f" | {row['output_tokens_mean']:.0f} | {row['seconds_median']:.1f}"
        )
    lines.append("")
    lines.append("a vs b | pairs | a won | b won | sign p | Wilcoxon p (Bonferroni)")
    for row in comparison.pairs:
        lines.append(
            f"{row['a']} vs {row['b']} | {row['pairs']} | {row['a_won']} | {row['b_won']}"
            f" | {_p(row['sign_p'])} | {_p(row['wilcoxon_p'])} ({_p(row['wilcoxon_p_bonferroni'])})"
        )
    return "\n".join(lines)


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
