"""The NLT paper's numbers from step records: accuracy, variance, tokens, ratio to native.

Pure functions over records (anything with ``strategy``, ``episode``, ``run``, ``success``,
``input_tokens``, ``output_tokens``, ``lm_calls``, ``seconds`` and ``metrics``): the NLT
benchmarks' ``summarize``, which the evaluation report shows.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from freyr_dspy.evaluation import variance_across_inputs, variance_across_runs

__all__ = ["summarize_records"]

BASELINE = "native"


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def strategy_summary(records: Sequence[Any]) -> dict[str, Any]:
    """Summarise the records of one strategy.

    ``accuracy`` is the exact-match rate over every (input, run); ``variance_inputs`` is
    the variance across inputs of their mean success (NLT's variance), ``variance_runs``
    the mean variance of one input's success across runs (instability); token and call
    counts are means per request.
    """
    by_input: dict[str, list[float]] = defaultdict(list)
    for record in records:
        by_input[record.episode].append(float(record.success))
    return {
        "requests": len(records),
        "inputs": len(by_input),
        "runs": len({record.run for record in records}),
        "accuracy": _mean([float(r.success) for r in records]),
        "variance_inputs": variance_across_inputs(by_input),
        "variance_runs": variance_across_runs(by_input),
        "extra_tools": _mean([float(r.metrics.get("extra", 0.0)) for r in records]),
        "missing_tools": _mean([float(r.metrics.get("missing", 0.0)) for r in records]),
        "tokens_in": _mean([float(r.input_tokens) for r in records]),
        "tokens_out": _mean([float(r.output_tokens) for r in records]),
        "lm_calls": _mean([float(r.lm_calls) for r in records]),
        "seconds": _mean([float(r.seconds) for r in records]),
    }


def summarize_records(records: Sequence[Any]) -> dict[str, Any]:
    """Summarise every strategy, plus input tokens relative to ``native`` when it ran.

    Returns:
        ``{"strategies": {name: strategy_summary}, "tokens_in_vs_native": {name: ratio}}``;
        a ratio below 1 means fewer input tokens than native (the paper: NLT 0.526).
    """
    groups: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        groups[record.strategy].append(record)
    summaries = {name: strategy_summary(group) for name, group in groups.items()}
    ratios: dict[str, float | None] = {}
    native = summaries.get(BASELINE, {}).get("tokens_in")
    if native:
        ratios = {
            name: s["tokens_in"] / native for name, s in summaries.items() if name != BASELINE
        }
    return {"strategies": summaries, "tokens_in_vs_native": ratios}
