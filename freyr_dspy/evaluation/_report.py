"""The evaluation report: JSON data (config, aggregates, raw records) and a text rendering.

The text follows the FREYR paper's Table 2: one row per case and contestant with Steps %,
tokens in, tokens out and seconds per step as mean ± 95 % half-width over runs; then the
Wilcoxon p-values, Steps % run by run with the steps each pair won and lost against each other,
the input-token ratio to ``native``, extra metrics a benchmark provides
through an optional ``summarize(records)``, and the steps that failed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from freyr_dspy._files import write_text_atomic
from freyr_dspy.errors import DataError
from freyr_dspy.evaluation._aggregate import ALL_CASES, METRICS, aggregate_benchmark
from freyr_dspy.evaluation._harness import EvalRun
from freyr_dspy.program import main_model

__all__ = [
    "clean_json",
    "flatten_scalars",
    "format_interval",
    "read_report",
    "render_text",
    "report_data",
    "write_json",
]

_HEADERS = {
    "steps_pct": "Steps %",
    "tokens_in": "Tokens in/step",
    "tokens_out": "Tokens out/step",
    "seconds": "Seconds/step",
}
_DIGITS = {"steps_pct": 1, "tokens_in": 0, "tokens_out": 0, "seconds": 2}
_SHORT = {"steps_pct": "Steps", "tokens_in": "Tok in", "tokens_out": "Tok out", "seconds": "Time"}
#: Failed steps listed per contestant in the text report (the JSON has all of them).
MAX_DIAGNOSTIC_LINES = 10


def report_data(evaluation: EvalRun) -> dict[str, Any]:
    """Everything about an evaluation, JSON-ready: config, aggregates and every raw record.

    A benchmark with a ``summarize(records)`` method adds its own metrics under ``summary``.
    """
    benchmarks = {}
    for name, benchmark in evaluation.plan.benchmarks.items():
        units = [u for u in evaluation.units if u.key.benchmark == name]
        labels = [c.label for c in evaluation.plan.contestants[name]]
        data = aggregate_benchmark(units, labels)
        summarize = getattr(benchmark, "summarize", None)
        if callable(summarize):
            data["summary"] = summarize([r for u in units for r in u.records])
        benchmarks[name] = data
    return clean_json(
        {
            "config": evaluation.describe(),
            "benchmarks": benchmarks,
            "records": [r.to_json() for r in evaluation.records],
        }
    )


def clean_json(value: Any) -> Any:
    """Replace NaN/inf by None (strict JSON has no NaN) and make values JSON types."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    return json.loads(json.dumps(value, default=str))


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename), so a crash never leaves half a file."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def read_report(path: Path, *, needs: Sequence[str] = ("config", "records")) -> dict[str, Any]:
    """Read a saved report (``freyr eval --out`` or ``--json`` output) with the parts ``needs``.

    Raises:
        DataError: the file cannot be read, is not JSON, or lacks one of ``needs``.
    """
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"not a freyr eval --out file ({exc.msg})") from exc
    except OSError as exc:
        raise DataError(path, None, f"cannot read: {exc.strerror}") from exc
    missing = [part for part in needs if not isinstance(report, dict) or part not in report]
    if missing:
        raise DataError(path, None, f"not a freyr eval --out file with {', '.join(missing)}")
    return dict(report)


def render_text(data: Mapping[str, Any]) -> str:
    """Render ``report_data`` output as plain-text tables, one section per benchmark."""
    config = data["config"]
    sections = []
    for name, bench in data["benchmarks"].items():
        head = f"{name} - {config['mode']} mode, {config['runs']} run(s), {_models(config)}"
        parts = [f"{head}\n{'=' * len(head)}\n{_main_table(bench['cases'])}"]
        parts += [_wilcoxon_lines(bench["wilcoxon"])]
        parts += [_head_to_head_lines(bench["cases"], bench.get("head_to_head", []))]
        parts += [_ratio_lines(bench["token_ratio"])]
        parts += [_summary_lines(bench.get("summary")), _diagnostic_lines(bench)]
        sections.append("\n\n".join(p for p in parts if p))
    return "\n\n".join(sections) + "\n"


def _models(config: Mapping[str, Any]) -> str:
    """The model line: a bare ``--model ID`` replaces the default; role specs follow."""
    specs = config.get("model_specs", [])
    parts = [main_model(specs, config["default_model"]), *(s for s in specs if "=" in s)]
    return f"model {' '.join(parts)}; " + " ".join(config.get("sampling_specs", []))


def _main_table(cases: Mapping[str, Mapping[str, Any]]) -> str:
    rows = [["Case", "Strategy", *(_HEADERS[m] for m in METRICS)]]
    for case, by_label in cases.items():
        for i, (label, metrics) in enumerate(by_label.items()):
            rows.append(
                [
                    case if i == 0 else "",
                    label,
                    *(format_interval(metrics[m], _DIGITS[m]) for m in METRICS),
                ]
            )
    return format_table(rows)


def format_interval(interval: Mapping[str, Any], digits: int) -> str:
    """``mean ± half`` (just the mean when the half-width is unknown; ``-`` without data)."""
    mean, half = interval.get("mean"), interval.get("half_width")
    if mean is None:
        return "-"
    text = f"{mean:.{digits}f}"
    return text if half is None else f"{text} ± {half:.{digits}f}"


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """Left-align the first two columns, right-align the others; a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        cells = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def _wilcoxon_lines(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    table: dict[tuple[str, str, str], dict[str, str]] = {}
    for row in rows:
        key = (row["case"], row["a"], row["b"])
        table.setdefault(key, {})[row["metric"]] = _format_p(row["p_bonferroni"])
    lines = [["Case", "Pair", *(_SHORT[m] for m in METRICS)]]
    lines += [
        [case, f"{a} vs {b}", *(ps.get(m, "-") for m in METRICS)]
        for (case, a, b), ps in table.items()
    ]
    pairs = len({(a, b) for _, a, b in table})
    title = f"Paired Wilcoxon signed-rank p-values (per step, Bonferroni x{pairs}):"
    return title + "\n" + format_table(lines)


def _head_to_head_lines(
    cases: Mapping[str, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> str:
    """Steps % of each run, then each pair's won/lost steps, over all cases."""
    if not cases:
        return ""
    case = ALL_CASES if ALL_CASES in cases else next(iter(cases))
    lines = [f"Steps % per run ({case}):"]
    for label, metrics in cases[case].items():
        runs = metrics.get("steps_pct_per_run") or []
        lines.append(f"  {label}: " + (" / ".join(f"{v:.1f}" for v in runs) or "-"))
    pairs = [r for r in rows if r["case"] == case]
    if pairs:
        lines.append(f"Steps won / lost, head to head ({case}; exact sign test, Bonferroni):")
    lines += [
        f"  {r['a']} vs {r['b']}: {r['a_won']} / {r['b_won']} of {r['pairs']} paired steps,"
        f" p {_format_p(r['p_bonferroni'])}"
        for r in pairs
    ]
    return "\n".join(lines)


def _format_p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _ratio_lines(ratios: Mapping[str, Mapping[str, float | None]]) -> str:
    lines = []
    for label, by_case in ratios.items():
        overall = by_case.get(ALL_CASES, next(iter(by_case.values()), None))
        cases = ", ".join(f"{c} {_pct(r)}" for c, r in by_case.items() if c != ALL_CASES)
        lines.append(
            f"  {label}: {_pct(overall)} of native's input tokens per step"
            + (f" ({cases})" if len(by_case) > 1 else "")
        )
    return "Input tokens vs native:\n" + "\n".join(lines) if lines else ""


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _summary_lines(summary: Any) -> str:
    if not isinstance(summary, Mapping):
        return ""
    flat = flatten_scalars(summary)
    return "Benchmark metrics:\n" + "\n".join(f"  {k}: {_scalar(v)}" for k, v in flat.items())


def flatten_scalars(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The scalar entries of nested dicts, with dotted keys (lists are left out)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_scalars(value, f"{name}."))
        elif value is None or isinstance(value, str | int | float | bool):
            flat[name] = value
    return flat


def _scalar(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _diagnostic_lines(bench: Mapping[str, Any]) -> str:
    lines = ["Failures and failed steps:"]
    for label, kinds in bench["failures"].items():
        counts = ", ".join(f"{k}={n}" for k, n in kinds.items()) or "none"
        variance = bench["variance"].get(label, {})
        lines.append(
            f"  {label}: {counts}; variance across inputs "
            f"{_scalar(variance.get('across_inputs'))}, across runs "
            f"{_scalar(variance.get('across_runs'))}"
        )
        rows = [s for s in bench["steps"] if s["strategy"] == label]
        failed = [s for s in rows if s["reached"] and (s["success_rate"] or 0.0) < 1]
        unreached = sum(1 for s in rows if not s["reached"])
        if unreached:
            lines.append(f"    {unreached} step(s) never reached: an earlier step failed")
        for step in failed[:MAX_DIAGNOSTIC_LINES]:
            lines.append(
                f"    {step['episode']}/{step['step']}: {_pct(step['success_rate'])} "
                f"{_kinds(step['failure_kinds'])} expected {_short(step['expected'])}"
                f" produced {_short(step['produced'])}"
            )
        if len(failed) > MAX_DIAGNOSTIC_LINES:
            lines.append(f"    ... {len(failed) - MAX_DIAGNOSTIC_LINES} more in the JSON")
    return "\n".join(lines)


def _kinds(kinds: Mapping[str, int]) -> str:
    return "[" + ", ".join(f"{k} x{n}" for k, n in kinds.items()) + "]"


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
