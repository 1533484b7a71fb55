"""The committed summary of a ``freyr eval --out`` file: its tables, not its step records.

The ``--out`` file holds every raw step record (the model's replies, the expected tools of each
benchmark step); what a project commits (``freyr eval export``) is the table only: per case
and contestant Steps %, tokens, seconds with their intervals, the Wilcoxon tests, token
ratios, failure counts, the command that produced it and the commit it ran on. Machine paths
are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["summarise_report"]

#: Per-benchmark parts of the report that name single steps (kept out of the summary).
STEP_LEVEL = ("steps",)
#: Config entries that describe this machine, not the measurement.
MACHINE = ("data_dir", "out", "jobs")


def summarise_report(report: Mapping[str, Any], *, command: str, code: str) -> dict[str, Any]:
    """The committed summary of one evaluation report.

    Args:
        report: a ``freyr eval --out`` (or ``--json``) document.
        command: the command that produced the report.
        code: the commit it ran on (``provenance.code_version``).

    Returns:
        JSON-ready: the command, the code, record counts, the config and the aggregates.
    """
    records = report.get("records", [])
    config = {k: v for k, v in report["config"].items() if k not in MACHINE}
    benchmarks = {
        name: {k: v for k, v in bench.items() if k not in STEP_LEVEL}
        for name, bench in report["benchmarks"].items()
    }
    units = len({(r["strategy"], r["run"], r["episode"]) for r in records})
    return {
        "command": command,
        "code": code,
        "steps_recorded": len(records),
        "units_recorded": units,
        "config": config,
        "benchmarks": benchmarks,
    }
