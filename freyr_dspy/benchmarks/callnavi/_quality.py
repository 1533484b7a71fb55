"""Data-quality checks of a CallNavi domain: reported, never silently fixed.

Each check mirrors an issue the benchmark's data is known to have (gold APIs missing from the
catalog, gold keys the spec does not declare, zero-argument calls encoded two ways, ...). The
kinds are named like the keys of the data export's ``data_quality.json`` so the two can be
compared. Scoring keeps these questions; reports can exclude or break them out by kind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.benchmarks.callnavi._data import PLACEHOLDER, CallNaviDomain, Question

__all__ = ["UNANSWERABLE", "QualityFlag", "flags_by_question", "quality_flags"]


@dataclass(frozen=True)
class QualityFlag:
    """One data-quality issue found in a question (or in the catalog when ``question`` is None)."""

    kind: str
    question: str | None
    detail: dict[str, Any] = field(default_factory=dict)


#: Issues that make a question unanswerable from the catalog, whatever the model does.
UNANSWERABLE = frozenset({"ground_truth_api_not_in_domain_api_list"})


def quality_flags(domain: CallNaviDomain) -> list[QualityFlag]:
    """Run every check over a domain and return the issues found, question by question."""
    flags: list[QualityFlag] = []
    texts = Counter(q.text for q in domain.questions)
    ids = Counter(q.id for q in domain.questions)
    irregular = set(padding_irregular([q.id for q in domain.questions]))
    for question in domain.questions:
        flags.extend(_question_flags(domain, question))
        if question.id in irregular:
            flags.append(QualityFlag("id_irregular_zero_padding", question.id))
        if ids[question.id] > 1:
            flags.append(QualityFlag("duplicate_id", question.id))
        if texts[question.text] > 1:
            flags.append(QualityFlag("duplicate_question_text", question.id))
    return flags


def flags_by_question(flags: list[QualityFlag]) -> dict[str, list[str]]:
    """Question id -> the kinds flagged for it (for per-step diagnostics)."""
    table: dict[str, list[str]] = {}
    for flag in flags:
        if flag.question is not None and flag.kind not in table.get(flag.question, []):
            table.setdefault(flag.question, []).append(flag.kind)
    return table


def _question_flags(domain: CallNaviDomain, q: Question) -> Iterator[QualityFlag]:
    apis, params = q.gold_apis, q.gold.get("parameters")
    yield from _shape_flags(q, apis, params)
    if isinstance(params, list):
        for api_name, args in zip(apis, params, strict=False):
            yield from _call_flags(domain, q, api_name, args)
    if q.text != q.text.strip():
        yield QualityFlag("question_text_leading_or_trailing_whitespace", q.id)
    if "$$" in q.text:
        yield QualityFlag("question_text_contains_literal_dollar_placeholder", q.id)
    for value in _unmentioned_values(q):
        yield QualityFlag("heuristic_value_not_verbatim_in_question", q.id, {"value": value})


def _shape_flags(q: Question, apis: list[str], params: Any) -> Iterator[QualityFlag]:
    if isinstance(params, dict):
        yield QualityFlag("parameters_object_form", q.id, {"API": apis})
    elif len(params) != len(apis):
        yield QualityFlag(
            "parameters_length_differs_from_API_length", q.id, {"API": apis, "parameters": params}
        )
    if q.difficulty == "medium" and len(apis) == 1:
        yield QualityFlag("medium_with_single_call", q.id, {"API": apis})
    if q.difficulty == "easy" and len(apis) != 1:
        yield QualityFlag("easy_without_exactly_one_call", q.id, {"API": apis})
    if len(set(apis)) != len(apis):
        yield QualityFlag("same_api_repeated_in_ground_truth", q.id, {"API": apis})
    if any(_has_number(v) for v in _values(params)):
        yield QualityFlag("ground_truth_has_numeric_values", q.id)


def _call_flags(
    domain: CallNaviDomain, q: Question, api_name: str, args: Any
) -> Iterator[QualityFlag]:
    spec = domain.api(api_name)
    if spec is None:
        yield QualityFlag("ground_truth_api_not_in_domain_api_list", q.id, {"api": api_name})
    if not isinstance(args, dict):
        yield QualityFlag("ground_truth_call_arguments_not_an_object", q.id, {"api": api_name})
        return
    if not args:
        yield QualityFlag("zero_arg_call_encoded_as_empty_dict", q.id, {"api": api_name})
    for key, value in args.items():
        if value == {}:
            yield QualityFlag("ground_truth_value_is_empty_object", q.id, {"key": key})
        if isinstance(value, dict | list) and PLACEHOLDER in _leaves(value):
            yield QualityFlag("placeholder_nested_inside_object_or_list", q.id, {"key": key})
    if spec is not None:
        unknown = [k for k in args if k not in spec.parameters]
        absent = [k for k in spec.parameters if k not in args]
        if unknown:
            yield QualityFlag(
                "ground_truth_param_key_not_in_api_spec", q.id, {"api": api_name, "keys": unknown}
            )
        if absent:
            yield QualityFlag(
                "api_spec_param_absent_from_ground_truth", q.id, {"api": api_name, "keys": absent}
            )


def _unmentioned_values(q: Question) -> list[str]:
    """Concrete gold values that do not occur in the question (case-insensitive, no commas)."""
    text = q.text.lower().replace(",", "")
    missing = []
    for value in _leaves(q.gold.get("parameters")):
        if value == PLACEHOLDER or isinstance(value, bool):
            continue
        written = str(value).lower().replace(",", "")
        if written and written not in text:
            missing.append(str(value))
    return missing


def _values(params: Any) -> list[Any]:
    if isinstance(params, dict):
        return list(params.values())
    return [v for call in params if isinstance(call, dict) for v in call.values()]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _has_number(value: Any) -> bool:
    return any(isinstance(v, int | float) and not isinstance(v, bool) for v in _leaves(value))


def padding_irregular(ids: list[str]) -> list[str]:
    """Ids whose number is not zero-padded like the majority of the domain's ids."""
    widths = Counter(len(m.group(1)) for i in ids if (m := re.search(r"(\d+)$", i)))
    usual = widths.most_common(1)[0][0] if widths else 0
    return [i for i in ids if (m := re.search(r"(\d+)$", i)) and len(m.group(1)) != usual]
