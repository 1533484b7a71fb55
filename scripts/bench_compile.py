"""The compile against the preset, on rows it never saw: the compile study's targets, side by side.

Each job is one ``freyr compile --json`` (the CLI a user runs), with its training rows, its
held-out rows and a seed; the job's row records (``runs/compile/<study>/records.jsonl``) give
the held-out rows one by one, before (the preset) and after (what shipped). Two kinds of job:

* ``same``: our suite's training file -> its test file (the same ten toolboxes), one job per
  seed (the seed decides the folds of the guard and the rows a candidate is first scored on);
* ``unseen``: leave three toolboxes out - the compile learns on the training rows of the other
  seven and is scored on the test rows of the three, for each of ``ROTATIONS`` - pooled.

Every job's estimate on its training rows (as shipped, and chosen fold by fold) is printed
beside its held-out result: how much the estimate shrinks is part of the report.

    python scripts/bench_compile.py same --model embedded/qwen2.5-coder-0.5b --seeds 0,1,2 \\
        --out runs/compile_same_05b.json
    python scripts/bench_compile.py unseen --model embedded/qwen2.5-coder-0.5b \\
        --out runs/compile_unseen_05b.json
    python scripts/bench_compile.py same --out runs/compile_same_05b.json --report-only

Finished jobs are saved to ``--out`` as they end; a rerun skips them (and a job cut short
resumes its compile study: every row it scored is cached).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import add_out_options, load_rows, markdown_table, save_rows

from freyr_dspy.benchmark import spread
from freyr_dspy.compiling import Tally, sign_test

ABOUT = "freyr compile against the model's preset on held-out rows, with its own estimate."
SUITE = Path(__file__).resolve().parent.parent / "trainsets" / "calls"
#: The toolboxes each leave-three-out job never sees, fixed before any was scored.
ROTATIONS = (
    ("kitchen", "fitness", "library"),
    ("geometry", "daily", "office"),
    ("devops", "banking", "travel"),
)
GREEDY = ("--sampling", "temperature=0", "--sampling", "seed=0")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.report_only:
        if not args.model:
            sys.exit("error: --model is needed to measure (or --report-only)")
        measure(args)
    print("\n".join(report(load_rows(args.out, missing_ok=False))))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=ABOUT)
    parser.add_argument("kind", choices=("same", "unseen"))
    parser.add_argument("--model", default=None)
    parser.add_argument("--seeds", default="0", help="comma-separated (same)")
    parser.add_argument("--timeout", type=float, default=20.0, help="the compile's budget, min")
    parser.add_argument("--limit", type=int, default=None, help="training rows (spread)")
    parser.add_argument("--test-limit", type=int, default=None, help="held-out rows (spread; same)")
    parser.add_argument("--suite", type=Path, default=SUITE)
    add_out_options(parser, None)
    return parser


def jobs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The jobs ``args`` asks for: name, training file, held-out file, seed."""
    if args.kind == "same":
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        train, test = args.suite / "train.jsonl", args.suite / "test.jsonl"
        if args.test_limit:
            subset = args.out.parent / f"{args.out.stem}-test.jsonl"
            test = _spread_file(test, subset, args.test_limit)
        return [{"job": f"same-s{s}", "train": train, "test": test, "seed": s} for s in seeds]
    folder = args.out.parent / f"{args.out.stem}-rows"
    found = []
    for left_out in ROTATIONS:
        name = "unseen-" + "-".join(left_out)
        train = _rows_file(args.suite / "train.jsonl", folder / f"{name}-train.jsonl", left_out)
        test = _rows_file(args.suite / "test.jsonl", folder / f"{name}-test.jsonl", left_out, True)
        found.append({"job": name, "train": train, "test": test, "seed": 0, "left_out": left_out})
    return found


def _rows_file(source: Path, target: Path, toolboxes: Sequence[str], keep: bool = False) -> Path:
    """``source``'s rows of ``toolboxes`` (``keep``) or of every other toolbox, in ``target``."""
    lines = source.read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if (json.loads(line)["toolbox"] in toolboxes) == keep]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return target


def _spread_file(source: Path, target: Path, limit: int) -> Path:
    """``limit`` of ``source``'s rows, evenly spread over it (every kind keeps its share)."""
    lines = source.read_text(encoding="utf-8").splitlines()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(spread(lines, limit)) + "\n", encoding="utf-8")
    return target


def measure(args: argparse.Namespace) -> None:
    """Run every job not saved yet, saving each as it ends."""
    rows = load_rows(args.out)
    done = {row["job"] for row in rows}
    for job in jobs(args):
        if job["job"] in done:
            continue
        rows.append(run_job(job, args))
        save_rows(args.out, ABOUT, rows)


def run_job(job: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """One ``freyr compile``, read back into a row of the report."""
    tools = args.suite / "tools.json"
    artifact = args.out.parent / f"{args.out.stem}-{job['job']}.json"
    command = [
        sys.executable, "-m", "freyr_dspy", "compile", "--tools", str(tools),
        "--examples", str(job["train"]), "--test", str(job["test"]), "--model", args.model, *GREEDY,
        "--seed", str(job["seed"]), "--timeout", str(args.timeout),
        "--out", str(artifact), "--json",
        *(("--limit", str(args.limit)) if args.limit else ()),
    ]  # fmt: skip
    print(f"{job['job']}: freyr {' '.join(command[3:])}", file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"error: {job['job']} failed: {done.stderr.strip().splitlines()[-1:]}")
    outcome = json.loads(done.stdout)
    return summary(job, args.model, outcome, _held_out_rows(Path(outcome["records"])))


def _held_out_rows(records: Path) -> list[dict[str, Any]]:
    """The held-out rows, one per row: its kind and toolbox, success before and after."""
    by_row: dict[str, dict[str, Any]] = {}
    for line in records.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "held_out" not in entry:
            continue
        row = by_row.setdefault(entry["row"], {"row": entry["row"], "kind": entry["kind"]})
        row[entry["held_out"]] = entry["success"]
        row[f"{entry['held_out']}_failure"] = entry["failure_kind"]
    return list(by_row.values())


def summary(
    job: dict[str, Any], model: str, outcome: dict[str, Any], held: list[dict[str, Any]]
) -> dict[str, Any]:
    """A job's row: the decision, the estimate on the training rows, the held-out result."""
    trials = {t["number"]: t for t in outcome["trials"]}
    base, shipped = trials[outcome["baseline"]], trials[outcome["shipped"]]
    guard = outcome["guard"]
    return {
        "job": job["job"],
        "model": model,
        "seed": job["seed"],
        "left_out": list(job.get("left_out", ())),
        "minutes": round(outcome["seconds"] / 60, 1),
        "shipped": outcome["shipped_config"],
        "decision": outcome["decision"],
        "candidates": [
            {k: t[k] for k in ("number", "stage", "state", "rows", "accuracy", "reason")}
            for t in outcome["trials"]
        ],
        "train_rows": outcome["rows"],
        "train_before": base["accuracy"],
        "train_after": shipped["accuracy"],
        "nested": guard["nested_accuracy"],
        "lower_bound": guard["gain_lower_bound"],
        "held_out": outcome.get("held_out"),
        "held_rows": held,
    }


def report(rows: list[dict[str, Any]]) -> list[str]:
    """The table of jobs, then the pooled held-out result and its kinds."""
    lines = markdown_table(
        ["job", "min", "shipped", "train (as shipped)", "nested", "held-out before -> after",
         "won / lost", "tokens", "s / row"],
        [_line(row) for row in rows],
    )  # fmt: skip
    held = [r for row in rows for r in row["held_rows"]]
    won = sum(1 for r in held if r.get("after", 0) >= 1 > r.get("before", 0))
    lost = sum(1 for r in held if r.get("before", 0) >= 1 > r.get("after", 0))
    before = sum(r.get("before", 0) for r in held) / max(len(held), 1)
    after = sum(r.get("after", 0) for r in held) / max(len(held), 1)
    lines += [
        "",
        f"pooled held-out: {100 * before:.1f} -> {100 * after:.1f} % over {len(held)} rows "
        f"(won {won}, lost {lost}, sign test p = {sign_test(won, lost):.3f}, gain's 90 % "
        f"lower bound {100 * Tally(won, lost, len(held)).lower_bound():+.1f} points)",
        "",
        *markdown_table(["kind", "rows", "before", "after", "won", "lost"], _kinds(held)),
    ]
    return lines


def _line(row: dict[str, Any]) -> list[object]:
    held = row["held_out"] or {}
    shipped = row["shipped"]
    what = shipped["strategy"] + (" + pool" if shipped.get("pool") else "")
    tallies = held.get("against_baseline", {})
    return [
        row["job"], row["minutes"], what,
        f"{100 * row['train_before']:.1f} -> {100 * row['train_after']:.1f}",
        f"{100 * row['nested']:.1f}",
        f"{100 * held.get('before', math.nan):.1f} -> {100 * held.get('after', math.nan):.1f}",
        f"{tallies.get('won', 0)} / {tallies.get('lost', 0)}",
        f"{held.get('tokens_before', 0):.0f} -> {held.get('tokens_after', 0):.0f}",
        f"{held.get('seconds_before', 0):.1f} -> {held.get('seconds_after', 0):.1f}",
    ]  # fmt: skip


def _kinds(held: list[dict[str, Any]]) -> list[list[object]]:
    counts = Counter(r["kind"] for r in held)
    table = []
    for kind in sorted(counts):
        mine = [r for r in held if r["kind"] == kind]
        table.append([
            kind, counts[kind], sum(int(r.get("before", 0)) for r in mine),
            sum(int(r.get("after", 0)) for r in mine),
            sum(1 for r in mine if r.get("after", 0) >= 1 > r.get("before", 0)),
            sum(1 for r in mine if r.get("before", 0) >= 1 > r.get("after", 0)),
        ])  # fmt: skip
    return table


if __name__ == "__main__":
    sys.exit(main())
