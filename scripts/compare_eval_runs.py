"""Compare contestants measured in separate ``freyr eval --out`` files, step by step.

A new strategy switch is often measured after its baseline: rather than re-running the
baseline, run only the new contestant with the same benchmark, model, sampling and runs, and
pair its steps with the stored ones. A pair is the same step of the same episode in the same
run (as in ``freyr eval``'s own report); the files must agree on everything but the
contestants, or the pairs would compare two set-ups. Prefix caching and thread timing can
still make a contestant's samples differ between processes, so a paired re-run is a weaker
control than one run: say which it is when reporting.

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
    "program_files",
    "extra",
)

StepKey = tuple[str, int, str, str]  # (benchmark, run, episode, step)


class MismatchError(ValueError):
    """The files were not measured under the same set-up."""


def load_records(paths: Sequence[Path]) -> tuple[dict[str, Any], dict[str, dict[StepKey, dict]]]:
    """The shared set-up of the files and, per contestant, its record of every step."""
    setup: dict[str, Any] | None = None
    by_contestant: dict[str, dict[StepKey, dict]] = {}
    for path in paths:
        report = json.loads(path.read_text(encoding="utf-8"))
        this = {key: report["config"].get(key) for key in SAME_SETUP}
        if setup is None:
            setup = this
        differing = [key for key in SAME_SETUP if this[key] != setup[key]]
        if differing:
            raise MismatchError(f"{path}: measured with another {', '.join(differing)}")
        for record in report["records"]:
            label = record["strategy"]
            key = (record["benchmark"], record["run"], record["episode"], record["step"])
            if key in by_contestant.get(label, {}):
                raise MismatchError(f"{path}: {label} measured {key} in an earlier file too")
            by_contestant.setdefault(label, {})[key] = record
    return setup or {}, by_contestant


def contestant_row(records: dict[StepKey, dict]) -> dict[str, Any]:
    """Steps %, tokens and seconds of one contestant over its steps."""
    rows = list(records.values())
    return {
        "steps": len(rows),
        "steps_pct": 100 * statistics.fmean(r["success"] >= 1 for r in rows),
        "input_tokens_mean": statistics.fmean(r["input_tokens"] for r in rows),
        "output_tokens_mean": statistics.fmean(r["output_tokens"] for r in rows),
        "seconds_median": statistics.median(r["seconds"] for r in rows),
    }


def pair_rows(by_contestant: dict[str, dict[StepKey, dict]]) -> list[dict[str, Any]]:
    """Every contestant pair: steps each completed alone, sign and Wilcoxon tests."""
    pairs = list(itertools.combinations(sorted(by_contestant), 2))
    rows = []
    for a, b in pairs:
        shared = sorted(set(by_contestant[a]) & set(by_contestant[b]))
        success_a = [float(by_contestant[a][k]["success"]) for k in shared]
        success_b = [float(by_contestant[b][k]["success"]) for k in shared]
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
        setup, by_contestant = load_records(args.reports)
    except (MismatchError, OSError, KeyError, json.JSONDecodeError) as error:
        print(f"compare_eval_runs: {error}", file=sys.stderr)
        return 2
    contestants = {label: contestant_row(records) for label, records in by_contestant.items()}
    pairs = pair_rows(by_contestant)
    print(render(contestants, pairs))
    if args.out:
        summary = {
            "files": [path.name for path in args.reports],
            "code": code_version(),
            "setup": setup,
            "contestants": contestants,
            "pairs": pairs,
        }
        args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
