"""The report of a search: Pareto table (text), JSON and CSV files, importances and plots.

Plots are self-contained HTML files that open offline: they share one ``plotly.min.js``
written next to them (plotly's ``include_plotlyjs="directory"``) instead of embedding 3 MB
each. A plot or importance that cannot be computed (too few trials, a single objective) is
skipped with a log message: a report never fails the search it describes.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freyr_dspy._files import write_text_atomic
from freyr_dspy.search._importance import objective_target
from freyr_dspy.search._result import SearchResult, TrialSummary
from freyr_dspy.search._svg import pareto_svg

if TYPE_CHECKING:
    from optuna import Study

__all__ = ["format_table", "write_report"]

logger = logging.getLogger(__name__)

_COLUMNS = ("trial", "state", "baseline", "cached")


def pareto_rows(
    result: SearchResult, trials: tuple[TrialSummary, ...] | None = None
) -> list[dict[str, Any]]:
    """One flat row per trial (default: the Pareto front, best first)."""
    chosen = sorted(result.pareto, key=result.sort_key) if trials is None else trials
    return [_row(trial, result.objectives) for trial in chosen]


def format_table(result: SearchResult) -> str:
    """The Pareto front as a text table, with the baseline for comparison."""
    counts = ", ".join(f"{n} {s.lower()}" for s, n in sorted(result.counts().items()))
    lines = [f"study {result.study_name} ({counts}); storage {result.storage}"]
    rows = pareto_rows(result)
    base = result.baseline
    if base and base.number not in {t.number for t in result.pareto}:
        rows.append(_row(base, result.objectives))
    header = ["trial", *result.objectives, "strategy", "retries", "models"]
    table = [header] + [
        [
            _mark(r, result),
            *(_fmt(r[o]) for o in result.objectives),
            r["strategy"],
            str(r["max_retries"]),
            r["models"],
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [
            cell.rjust(w) if i else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join([*cells, row[-1]]))
    lines.append("* best (shipped by --compile-best); b baseline (the default configuration)")
    failed = [t for t in result.trials if t.state == "FAIL"]
    if failed:
        lines.append(
            f"{len(failed)} failed trial(s); first: #{failed[0].number} {failed[0].failure}"
        )
    for objective, values in result.importances.items():
        top = sorted(values.items(), key=lambda kv: -kv[1])[:5]
        lines.append(f"importance for {objective}: " + ", ".join(f"{p} {v:.2f}" for p, v in top))
    return "\n".join(lines)


def write_report(result: SearchResult, study: Study, out_dir: Path) -> dict[str, Path]:
    """Write ``report.json``, ``pareto.csv``, ``trials.csv``, the HTML plots and ``pareto.svg``.

    Returns:
        Kind of file -> path, for the files that were written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "report": out_dir / "report.json",
        "pareto_csv": out_dir / "pareto.csv",
        "trials_csv": out_dir / "trials.csv",
    }
    # Written whole or not at all: a search killed mid-report keeps the previous files.
    write_text_atomic(files["report"], json.dumps(result.to_json(), indent=2, default=str))
    _write_csv(files["pareto_csv"], pareto_rows(result), result.objectives)
    _write_csv(files["trials_csv"], pareto_rows(result, result.trials), result.objectives)
    if any(t.state == "COMPLETE" for t in result.trials):
        files.update(write_plots(study, result.objectives, out_dir / "plots"))
        svg = pareto_svg(result) if {"accuracy", "tokens"} <= set(result.objectives) else None
        if svg is not None:
            files["pareto_svg"] = out_dir / "plots" / "pareto.svg"
            files["pareto_svg"].parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(files["pareto_svg"], svg)
    return files


def write_plots(study: Study, objectives: tuple[str, ...], plot_dir: Path) -> dict[str, Path]:
    """Write the Pareto front, optimisation history and importance plots as HTML."""
    from optuna import visualization as vis

    first = objective_target(0, objectives[0], for_importance=False)
    makers: dict[str, Callable[[], Any]] = {
        "history": lambda: vis.plot_optimization_history(
            study, target=first, target_name=objectives[0]
        ),
        "importances": lambda: vis.plot_param_importances(
            study, target=objective_target(0, objectives[0]), target_name=objectives[0]
        ),
    }
    if len(objectives) in (2, 3):
        makers["pareto_front"] = lambda: vis.plot_pareto_front(study, target_names=list(objectives))
    written = {}
    for name, make in makers.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                figure = make()
            plot_dir.mkdir(parents=True, exist_ok=True)
            path = plot_dir / f"{name}.html"
            figure.write_html(str(path), include_plotlyjs="directory")
        except (ImportError, RuntimeError, ValueError, ZeroDivisionError) as exc:
            logger.info("skipping the %s plot: %s", name, exc)
            continue
        written[name] = path
    return written


def _row(trial: TrialSummary, objectives: tuple[str, ...]) -> dict[str, Any]:
    config = trial.trial_config()
    row: dict[str, Any] = {
        "trial": trial.number,
        "state": trial.state,
        "baseline": trial.baseline,
        "cached": trial.cached,
    }
    row.update({o: trial.values.get(o) for o in objectives})
    row.update(
        {
            "strategy": config.strategy if config else "",
            "max_retries": config.max_retries if config else "",
            "num_demos": config.num_demos if config else "",
            "models": config.models_text() if config else "",
            "sampling": " ".join(
                f"{r}:{_sampling_text(s.sampling.as_kwargs())}"
                for r, s in config.assignment.items()
            )
            if config
            else "",
            "failure": trial.failure or "",
        }
    )
    return row


def _sampling_text(kwargs: dict[str, float | int]) -> str:
    short = {"temperature": "t", "top_p": "p", "top_k": "k"}
    return "/".join(f"{short[k]}{v:g}" for k, v in kwargs.items() if k in short) or "default"


def _write_csv(path: Path, rows: list[dict[str, Any]], objectives: tuple[str, ...]) -> None:
    columns = [
        *_COLUMNS,
        *objectives,
        "strategy",
        "max_retries",
        "num_demos",
        "models",
        "sampling",
        "failure",
    ]
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, buffer.getvalue())


def _mark(row: dict[str, Any], result: SearchResult) -> str:
    best = result.best
    marks = ("*" if best and row["trial"] == best.number else "") + ("b" if row["baseline"] else "")
    return f"{row['trial']}{marks}"


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"
