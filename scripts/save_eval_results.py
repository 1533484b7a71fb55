"""Keep the aggregates of a ``freyr eval --out`` file under ``scripts/results/`` for the README.

The ``--out`` file holds every raw step record (the model's replies, the expected tools of each
benchmark step); what we commit is the table only: per case and contestant Steps %, tokens,
seconds with their intervals, the Wilcoxon tests, token ratios, failure counts, and the command
that produced it. Machine paths are left out.

    python scripts/save_eval_results.py runs/llmaker_15b.json scripts/results/llmaker_15b.json \
        --command "freyr eval --benchmark llmaker ..."
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import code_version

#: Per-benchmark parts of the report that name single steps (kept out of the summary).
STEP_LEVEL = ("steps",)
#: Config entries that describe this machine, not the measurement.
MACHINE = ("data_dir", "out", "jobs")


def summarise(report: dict, command: str) -> dict:
    """The committed summary of one evaluation report."""
    config = {k: v for k, v in report["config"].items() if k not in MACHINE}
    benchmarks = {
        name: {k: v for k, v in bench.items() if k not in STEP_LEVEL}
        for name, bench in report["benchmarks"].items()
    }
    units = len({(r["strategy"], r["run"], r["episode"]) for r in report.get("records", [])})
    return {
        "command": command,
        "code": code_version(),
        "steps_recorded": len(report.get("records", [])),
        "units_recorded": units,
        "config": config,
        "benchmarks": benchmarks,
    }


def main() -> None:
    """Read the eval JSON, write the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a freyr eval --out file (or --json output)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--command", required=True, help="the command that produced the report")
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    summary = summarise(report, args.command)
    args.out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {summary['steps_recorded']} step records summarised")


if __name__ == "__main__":
    main()
