"""Score CallNavi steps and summarise records: the glue between programs and ``metrics``.

The scored prediction is the plan a CallNavi strategy left in the state (its exact shape,
``[]`` zero-argument lists included). A generic strategy (``gated``, ``freyr``) leaves no
plan: its calls, in order, become the call list, and its answer text is that list as JSON
(the model never wrote the JSON itself, so syntax validity says nothing about it).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import dspy

from freyr_dspy.benchmark import Step, StepScore
from freyr_dspy.benchmarks.callnavi._domain import CallNaviState
from freyr_dspy.benchmarks.callnavi._metrics import (
    ast_match,
    ast_match_strict,
    by_difficulty,
    canonical_output,
    election_stability,
    levenshtein_stability,
    order_match,
    routing_match,
    routing_match_strict,
    structure_match,
    structure_match_strict,
    syntax_valid,
    syntax_valid_strict,
)
from freyr_dspy.benchmarks.callnavi._quality import UNANSWERABLE
from freyr_dspy.schemas import Result

__all__ = ["score_prediction", "step_metrics", "summarize_records"]

#: Metrics reported per difficulty and macro-averaged; the others only overall.
BY_DIFFICULTY = ("ast", "routing", "ast_strict")
OVERALL = ("routing_strict", "syntax", "syntax_strict", "structure", "structure_strict", "order")


def predicted_plan(result: Result) -> tuple[dict[str, Any], str]:
    """The call list a result stands for, and the answer text syntax validity judges."""
    state = result.state
    if isinstance(state, CallNaviState) and state.plan is not None:
        return state.plan, result.reply
    plan = {
        "API": [c.tool for c in result.calls],
        "parameters": [c.arguments for c in result.calls],
    }
    # No calls at all (a chat reply, a model failure): the answer text is whatever was said.
    return plan, json.dumps(plan, ensure_ascii=False) if result.calls else result.reply


def step_metrics(plan: Mapping[str, Any], raw: str, gold: Mapping[str, Any]) -> dict[str, float]:
    """Every metric of one answer, as floats (1.0 / 0.0)."""
    apis = plan.get("API") if isinstance(plan.get("API"), list) else []
    flags = {
        "ast": ast_match(dict(plan), gold),
        "ast_strict": ast_match_strict(dict(plan), gold),
        "routing": routing_match([str(a) for a in apis or []], gold["API"]),
        "routing_strict": routing_match_strict([str(a) for a in apis or []], gold["API"]),
        "syntax": syntax_valid(raw),
        "syntax_strict": syntax_valid_strict(raw),
        "structure": structure_match(dict(plan), gold),
        "structure_strict": structure_match_strict(dict(plan), gold),
        "order": order_match(dict(plan), gold),
    }
    return {name: float(value) for name, value in flags.items()}


def score_prediction(step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
    """Score one question: success = AST exact match (original), all metrics alongside."""
    result: Result = prediction.result
    plan, raw = predicted_plan(result)
    gold = step.expected["gold"]
    metrics = step_metrics(plan, raw, gold)
    return StepScore(
        success=metrics["ast"],
        metrics=metrics,
        failure_kind=None if metrics["ast"] else _failure_kind(step, result, metrics),
        diagnostics={
            "difficulty": step.expected.get("difficulty"),
            "domain": step.expected.get("domain"),
            "flags": step.expected.get("flags", []),
            "expected": gold,
            "produced": plan,
            "output": canonical_output(plan),
            # per role: [LM calls, input tokens, output tokens] - how big each prompt was
            "usage": {
                role: [u.lm_calls, u.input_tokens, u.output_tokens]
                for role, u in result.usage.items()
            },
        },
    )


def _failure_kind(step: Step, result: Result, metrics: Mapping[str, float]) -> str:
    failure = result.failure
    if failure is not None and failure.model_failed:
        return failure.kind  # "context" or "model"
    if step.expected.get("unanswerable"):
        return "unanswerable"
    return "routing" if not metrics["routing"] else "parameters"


def summarize_records(records: Sequence[Any]) -> dict[str, Any]:
    """Per strategy: per-difficulty/macro scores, overall scores, per-domain cost, stability.

    Records of every run are pooled for the averages (equal to the mean over runs when every
    run covers the same questions).
    """
    by_strategy: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        by_strategy[record.strategy].append(record)
    return {name: _summary(group) for name, group in by_strategy.items()}


def _summary(records: Sequence[Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for metric in BY_DIFFICULTY:
        summary[metric] = by_difficulty(
            (r.diagnostics.get("difficulty", "easy"), r.metrics.get(metric, 0.0)) for r in records
        )
    for metric in OVERALL:
        summary[metric] = _mean(r.metrics.get(metric, 0.0) for r in records)
    # Questions whose gold API is not in the catalog cannot be answered; report without them.
    answerable = [r for r in records if not UNANSWERABLE & set(r.diagnostics.get("flags", []))]
    summary["ast_answerable"] = _mean(r.metrics.get("ast", 0.0) for r in answerable)
    summary["by_domain"] = _by_domain(records)
    runs = {r.run for r in records}
    if len(runs) > 1:
        summary["stability"] = stability(records)
    return summary


def _by_domain(records: Sequence[Any]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        groups[record.case].append(record)
    return {
        domain: {
            "questions": len({r.episode for r in group}),
            "ast": _mean(r.metrics.get("ast", 0.0) for r in group),
            "routing": _mean(r.metrics.get("routing", 0.0) for r in group),
            "tokens_in_per_question": _mean(float(r.input_tokens) for r in group),
            "lm_calls_per_question": _mean(float(r.lm_calls) for r in group),
        }
        for domain, group in groups.items()
    }


def stability(records: Sequence[Any]) -> dict[str, float]:
    """Election and Levenshtein stability over the runs of each question, averaged.

    Runs are ordered by run index (run 0 is Levenshtein's reference); a question seen in only
    one run is left out.
    """
    outputs: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for record in records:
        text = record.diagnostics.get("output") or canonical_output(None)
        outputs[record.episode].append((record.run, text))
    series = [[text for _, text in sorted(runs)] for runs in outputs.values() if len(runs) > 1]
    if not series:
        return {}
    return {
        "election": _mean(election_stability(s) for s in series),
        "levenshtein": _mean(levenshtein_stability(s) for s in series),
        "questions": float(len(series)),
    }


def _mean(values: Any) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
