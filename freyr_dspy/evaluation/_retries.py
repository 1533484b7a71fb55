"""How often a tool call's retries repaired it, per contestant of ``freyr eval --out`` files.

The Steps % of a run says whether a step succeeded; it does not say whether the retries did
anything. ``freyr eval stats`` counts, over every tool call the contestants made:

- *failing calls*: calls whose first attempt failed (the retries' work);
- *repaired*: failing calls whose last attempt succeeded;
- *alike on every attempt*: failing calls that used every attempt and got the same error on
  each - the model wrote back what its feedback showed, the failure the retry switches
  (``exclude_blamed``, ``choose_listed``) are for.

A row is a contestant label; the same label in several files (two seeds of ``freyr``) adds up
into one row, unlike ``freyr eval compare``, which pairs steps and so refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["format_retry_table", "retry_stats"]


@dataclass
class RetryStats:
    """Counts over one contestant's tool calls."""

    calls: int = 0
    failing: int = 0
    repaired: int = 0
    alike_every_attempt: int = 0

    def add(self, call: Mapping[str, Any]) -> None:
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


def retry_stats(records: Iterable[Mapping[str, Any]]) -> dict[str, RetryStats]:
    """Per contestant (its strategy label), the retry counts over all its records' calls."""
    stats: dict[str, RetryStats] = {}
    for record in records:
        counts = stats.setdefault(record["strategy"], RetryStats())
        for call in record.get("calls") or []:
            counts.add(call)
    return stats


def format_retry_table(stats: Mapping[str, RetryStats]) -> str:
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
