"""Compare contestants measured in separate ``freyr eval --out`` files, step by step.

A new strategy switch is often measured after its baseline: rather than re-running the
baseline, run only the new contestant with the same benchmark, model, sampling and runs, and
pair its steps with the stored ones. A pair is the same step of the same episode in the
same run, and a step an episode never reached counts as failed, as in ``freyr eval``'s own
report. The files must agree on everything but the contestants, or the pairs would compare
two set-ups; an eval file does not record the commit it ran on, so check that yourself.
Prefix caching and thread timing can still make a contestant's samples differ between
processes, so a paired re-run is a weaker control than one run: say which it is.

    python scripts/compare_eval_runs.py runs/llmaker_15b_blame.json runs/llmaker_15b_listed.json \
        --out scripts/results/llmaker_15b_choose_listed.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import code_version

from freyr_dspy.evaluation.stats import bonferroni, sign_test, wilcoxon_paired

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


class MismatchError(ValueError):
    """The files were not measured under the same set-up."""


@dataclass
class Contestant:
    """One contestant's planned steps and the records of those it reached."""

    planned: set[StepKey] = field(default_factory=set)
    records: dict[StepKey, Record] = field(default_factory=dict)

    def success(self, key: StepKey) -> float:
        """A step's success; 0 for a step its episode never reached (as ``freyr eval`` counts)."""
        record = self.records.get(key)
        return float(record["success"]) if record else 0.0


def load_contestants(paths: Sequence[Path]) -> tuple[dict[str, Any], dict[str, Contestant]]:
    """The shared set-up of the files and their contestants."""
    setup: dict[str, Any] | None = None
    contestants: dict[str, Contestant] = {}
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        this = {key: report["config"].get(key) for key in SAME_SETUP}
        setup = this if setup is None else setup
        differing = [key for key in SAME_SETUP if this[key] != setup[key]]
        if differing:
            raise MismatchError(f"{path}: measured with another {', '.join(differing)}")
        labels_here = {r["strategy"] for r in report["records"]} | set(_planned(report))
        if labels_here & set(contestants):
            raise MismatchError(f"{path}: {sorted(labels_here & set(contestants))} in two files")
        for label, keys in _planned(report).items():
            contestants.setdefault(label, Contestant()).planned |= keys
        for record in report["records"]:
            key = (record["benchmark"], record["run"], record["episode"], record["step"])
            contestant = contestants.setdefault(record["strategy"], Contestant())
            contestant.records[key] = record
            contestant.planned.add(key)
    return setup or {}, contestants


def _planned(report: dict[str, Any]) -> dict[str, set[StepKey]]:
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


def pair_rows(contestants: dict[str, Contestant]) -> list[dict[str, Any]]:
    """Every contestant pair: steps each did better, sign and Wilcoxon tests."""
    rows = []
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


def render(contestants: dict[str, dict[str, Any]], pairs: list[dict[str, Any]]) -> str:
    """The comparison as two plain-text tables."""
    lines = ["contestant | steps | Steps % | input tok/step | output tok/step | s/step (median)"]
    for label, row in sorted(contestants.items(), key=lambda item: -item[1]["steps_pct"]):
        lines.append(
            f"{label} | {row['steps']} | {row['steps_pct']:.1f} | {row['input_tokens_mean']:.0f}"
            f" | {row['output_tokens_mean']:.0f} | {row['seconds_median']:.1f}"
        )
    lines.append("")
    lines.append("a vs b | pairs | a won | b won | sign p | Wilcoxon p (Bonferroni)")
    for row in pairs:
        lines.append(
            f"{row['a']} vs {row['b']} | {row['pairs']} | {row['a_won']} | {row['b_won']}"
            f" | {_p(row['sign_p'])} | {_p(row['wilcoxon_p'])} ({_p(row['wilcoxon_p_bonferroni'])})"
        )
    return "\n".join(lines)


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    """Read the files, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="freyr eval --out files")
    parser.add_argument("--out", type=Path, help="where to write the comparison as JSON")
    args = parser.parse_args(argv)
    try:
        setup, by_contestant = load_contestants(args.reports)
    except (MismatchError, OSError, KeyError, json.JSONDecodeError) as error:
        print(f"compare_eval_runs: {error}", file=sys.stderr)
        return 2
    contestants = {label: contestant_row(records) for label, records in by_contestant.items()}
    pairs = pair_rows(by_contestant)
    print(render(contestants, pairs))
    if args.out:
        summary = {
            "files": [path.name for path in args.reports],
            "compared_on": code_version(),  # the files do not record the commit they ran
            "setup": setup,
            "contestants": contestants,
            "pairs": pairs,
        }
        args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
