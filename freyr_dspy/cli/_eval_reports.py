"""``freyr eval compare | stats | export``: read saved ``freyr eval --out`` files, run nothing."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from freyr_dspy._files import write_text_atomic
from freyr_dspy.evaluation import (
    code_version,
    compare_reports,
    format_retry_table,
    read_report,
    render_comparison,
    retry_stats,
    summarise_report,
)

__all__ = ["compare", "export", "stats"]

_REPORT = click.Path(path_type=Path, exists=True, dir_okay=False)
_OUT = click.Path(path_type=Path, dir_okay=False)


@click.command("compare")
@click.argument("reports", type=_REPORT, nargs=-1, required=True)
@click.option("--out", type=_OUT, help="Also write the comparison as JSON here.")
def compare(reports: tuple[Path, ...], out: Path | None) -> None:
    """Pair the steps of contestants measured in separate --out files.

    Run only the new contestant, with the baseline's benchmark, model, sampling and runs, and
    pair its steps with the stored ones; files measured another way are refused. The files do
    not record their commit: check that yourself.
    """
    comparison = compare_reports(reports)
    click.echo(render_comparison(comparison))
    if out is not None:
        _write(out, comparison.to_json(code=code_version()), indent=2)


@click.command("stats")
@click.argument("reports", type=_REPORT, nargs=-1, required=True)
@click.option("--out", type=_OUT, help="Also write the counts as JSON here.")
def stats(reports: tuple[Path, ...], out: Path | None) -> None:
    """Count the tool calls whose retries repaired them, per contestant.

    The same contestant in several files (two seeds) adds up into one row.
    """
    records = [record for path in reports for record in read_report(path)["records"]]
    counts = retry_stats(records)
    click.echo(format_retry_table(counts))
    if out is not None:
        _write(out, {name: asdict(row) for name, row in counts.items()}, indent=1)
        click.echo(f"wrote {out}", err=True)


@click.command("export")
@click.argument("report", type=_REPORT)
@click.argument("out", type=_OUT)
@click.option("--command", required=True, help="The command that produced the report.")
def export(report: Path, out: Path, command: str) -> None:
    """Save the tables of REPORT to OUT, without step records or machine paths.

    What a project commits (e.g. under docs/results/data/): the aggregates, the command and
    the commit that produced them.
    """
    data = read_report(report, needs=("config", "benchmarks"))
    summary = summarise_report(data, command=command, code=code_version())
    _write(out, summary, indent=2)
    click.echo(f"wrote {out}: {summary['steps_recorded']} step records summarised", err=True)


def _write(path: Path, data: Any, *, indent: int) -> None:
    """Write JSON as the scripts these commands replace did, so old and new files compare."""
    write_text_atomic(path, json.dumps(data, indent=indent) + "\n")
