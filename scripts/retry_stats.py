"""How often a tool call's retries repaired it, per contestant of ``freyr eval --out`` files.

The Steps % of a run says whether a step succeeded; it does not say whether the retries did
anything. This counts, over every tool call the contestants made:

- *failing calls*: calls whose first attempt failed (the retries' work);
- *repaired*: failing calls whose last attempt succeeded;
- *alike on every attempt*: failing calls that used every attempt and got the same error on
  each - the model wrote back what its feedback showed, the failure the retry switches
  (``exclude_blamed``, ``choose_listed``) are for.

A row is a contestant label; the same label in several files (two seeds of ``freyr``) adds up
into one row, unlike ``compare_eval_runs.py``, which pairs steps and so refuses it.

    python scripts/retry_stats.py runs/llmaker_05b_final_s2.json [more.json ...] \
        --out scripts/results/retry_stats_05b_s2.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

Record = dict[str, Any]  # one step record of an eval --out file


@dataclass
class RetryStats:
    """Counts over one contestant's tool calls."""

    calls: int = 0
    failing: int = 0
    repaired: int = 0
    alike_every_attempt: int = 0

    def add(self, call: dict[str, Any]) -> None:
        """Count one call record (``tool``, ``attempts``, ``errors``, ``outcome``)."""
        self.calls += 1
        errors = call.get("errors") or []
        if not errors:
            return
        self.failing += 1
        if (call.get("outcome") or {}).get("ok"):
            self.repaired += 1
            return
        used_every_attempt = len(errors) >= int(call.get("attempts") or 1) > 1
        if used_every_attempt and len(set(errors)) == 1:
            self.alike_every_attempt += 1


def retry_stats(records: Iterable[Record]) -> dict[str, RetryStats]:
    """Per contestant (its strategy label), the retry counts over all its records' calls."""
    stats: dict[str, RetryStats] = {}
    for record in records:
        counts = stats.setdefault(record["strategy"], RetryStats())
        for call in record.get("calls") or []:
            counts.add(call)
    return stats


def load_records(path: Path) -> list[Record]:
    """The step records of one eval --out file, or a one-line error naming the file."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        return list(report["records"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"{path}: not a freyr eval --out file with records ({error})") from error


def format_table(stats: dict[str, RetryStats]) -> str:
    """A plain-text table, one row per contestant."""
    width = max([len("contestant"), *map(len, stats)])
    header = f"{'contestant':<{width}} {'calls':>6} {'failing':>8} {'repaired':>9} {'alike':>6}"
    rows = [header, "-" * len(header)]
    for name, counts in stats.items():
        rows.append(
            f"{name:<{width}} {counts.calls:>6} {counts.failing:>8} "
            f"{counts.repaired:>9} {counts.alike_every_attempt:>6}"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+", help="freyr eval --out files")
    parser.add_argument("--out", type=Path, help="also write the counts as JSON here")
    args = parser.parse_args(argv)
    records = [record for path in args.reports for record in load_records(path)]
    stats = retry_stats(records)
    print(format_table(stats))
    if args.out:
        payload = {name: asdict(counts) for name, counts in stats.items()}
        args.out.write_text(json.dumps(payload, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
