"""CallNavi metrics: the original code's behaviour, and a strict variant beside each.

The *original* functions reproduce what the released scripts compute (``shared/specs/
callnavi.md`` §3), quirks included: routing is case-insensitive after deleting quotes,
brackets, spaces and newlines; syntax validity swaps ``'`` for ``"`` and accepts any JSON
value; structure and AST tolerate extra keys, need equal list lengths, and honour the
``"$$$"`` placeholder (and a gold ``{}``) as a wildcard only for top-level argument values.
Where the original script would crash on a malformed prediction, the score is 0.

The *strict* variants fix what the spec shows to be lenient or buggy: exact ordered API
names, JSON objects of the right shape only, no extra or missing keys, a zero-argument call
written ``[]`` or ``[{}]`` alike, and placeholders honoured at any depth.

Stability over N runs (paper §5.3; never implemented by the authors), with our choices:
outputs are compared as the canonical JSON of the predicted call list (multi-role strategies
have no single raw text), lower-cased with all whitespace, quotes and backticks removed; a
failed run counts as the empty call list; the question score is averaged over questions that
ran at least twice; Levenshtein stability of two empty strings is 1.

All functions are pure and do no I/O.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from freyr_dspy.benchmarks.callnavi._data import DIFFICULTIES, PLACEHOLDER
from freyr_dspy.evaluation import levenshtein
from freyr_dspy.prompting import load_json

__all__ = [
    "PAPER_DENOMINATORS",
    "ast_match",
    "ast_match_strict",
    "by_difficulty",
    "canonical_output",
    "election_stability",
    "levenshtein_stability",
    "normalise_calls",
    "order_match",
    "routing_match",
    "routing_match_strict",
    "routing_normalise",
    "structure_match",
    "structure_match_strict",
    "syntax_valid",
    "syntax_valid_strict",
    "values_match",
]

#: The denominators ``Judge_para.py`` hard-codes (the paper's counts; the data has 187/86).
PAPER_DENOMINATORS = {"easy": 456, "medium": 188, "hard": 85, "all": 729}

_ROUTING_DELETE = str.maketrans("", "", "'\"[]\n `\\")
_INVALID = object()  # what load_json returns for text that is not JSON


# --------------------------------------------------------------------------- routing


def routing_normalise(text: str) -> str:
    """Normalise a routing answer the original way.

    Quotes, brackets, newlines, spaces, backticks and backslashes are deleted, then the text
    is lower-cased (tabs and carriage returns stay).
    """
    return text.translate(_ROUTING_DELETE).lower()


def routing_match(predicted: str | Sequence[str], gold_apis: Sequence[str]) -> bool:
    """API routing exact match as ``Judge_call.py`` computes it.

    Args:
        predicted: the router's raw text, or a list of names (rendered like Python's ``str``).
        gold_apis: the gold API names in call order.
    """
    text = predicted if isinstance(predicted, str) else str(list(predicted))
    return routing_normalise(text) == routing_normalise(str(list(gold_apis)))


def routing_match_strict(predicted: Sequence[str], gold_apis: Sequence[str]) -> bool:
    """Exact, case-sensitive, ordered equality of the API name lists."""
    return list(predicted) == list(gold_apis)


# --------------------------------------------------------------------------- syntax


def syntax_valid(raw: str) -> bool:
    """Check syntax validity the original way.

    Swap ``'`` for ``"``, drop code fences, and ask a strict JSON parser; any JSON value
    passes (a bare list or number too).
    """
    text = raw.replace("'", '"').replace("```json", "").replace("```", "")
    return load_json(text, repair=False, max_depth=None, default=_INVALID) is not _INVALID


def syntax_valid_strict(raw: str) -> bool:
    """Check syntax validity strictly.

    The text (fences aside) must be a JSON object ``{"API": [names], "parameters":
    [objects]}`` as written, without quote swapping.
    """
    text = raw.strip()
    if text.startswith("```"):
        text = text.removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    value = load_json(text, repair=False, max_depth=None, default=_INVALID)
    return value is not _INVALID and _well_formed(value)


def _well_formed(value: Any) -> bool:
    if not isinstance(value, dict) or set(value) != {"API", "parameters"}:
        return False
    apis, params = value["API"], value["parameters"]
    return (
        isinstance(apis, list)
        and all(isinstance(a, str) for a in apis)
        and isinstance(params, list)
        and all(isinstance(p, dict) for p in params)
    )


# --------------------------------------------------------------------------- structure / AST


def structure_match(pred: Any, gold: Mapping[str, Any]) -> bool:
    """Structural accuracy as ``Judge_para.py`` computes it (extra keys allowed)."""
    if not isinstance(pred, dict) or not pred or "API" not in pred or "parameters" not in pred:
        return False
    if pred == gold:
        return True
    pairs = _aligned_calls(pred, gold)
    return pairs is not None and all(set(g) <= set(p) for p, g in pairs)


def ast_match(pred: Any, gold: Mapping[str, Any]) -> bool:
    """AST exact match as ``Judge_para.py`` computes it.

    Every gold key must be present; a gold value ``"$$$"`` or ``{}`` accepts anything, but only
    at the top level of a call's arguments; other values must be equal by Python equality
    (type-, case- and whitespace-sensitive). Extra predicted keys are allowed.
    """
    if not structure_match(pred, gold):
        return False
    if pred == gold:
        return True
    pairs = _aligned_calls(pred, gold)
    assert pairs is not None  # structure_match checked the alignment
    return all(
        value == PLACEHOLDER or value == {} or p[key] == value
        for p, g in pairs
        for key, value in g.items()
    )


def order_match(pred: Any, gold: Mapping[str, Any]) -> bool:
    """Compute ``Judge_para.py``'s "API Call" flag.

    True for equal objects, or equal API lists (case-sensitive, ordered) with parameter lists
    of equal length.
    """
    if not isinstance(pred, dict) or "API" not in pred or "parameters" not in pred:
        return False
    if pred == gold:
        return True
    try:
        return bool(pred["API"] == gold["API"]) and len(pred["parameters"]) == len(
            gold["parameters"]
        )
    except TypeError:
        return False


def _aligned_calls(
    pred: Mapping[str, Any], gold: Mapping[str, Any]
) -> list[tuple[Any, Any]] | None:
    """Pair predicted and gold calls by index the way the original loops do.

    Returns None where the original would fail or crash (different APIs or lengths,
    non-object elements).
    """
    pred_params, gold_params = pred.get("parameters"), gold.get("parameters")
    if pred.get("API") != gold.get("API"):
        return None
    try:
        if len(pred_params) != len(gold_params):  # type: ignore[arg-type]
            return None
        pairs = [(pred_params[i], gold_params[i]) for i in range(len(gold_params))]  # type: ignore[index,arg-type]
    except (TypeError, KeyError, IndexError):
        return None  # e.g. object-form gold parameters: the original raises KeyError
    if not all(isinstance(p, dict) and isinstance(g, dict) for p, g in pairs):
        return None
    return pairs


def normalise_calls(calls: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """Read a call list into ``(api, arguments)`` pairs, or None when it is malformed.

    ``[]`` parameters with zero-argument calls become ``{}`` per call, and the 2024-era single
    object form becomes a one-element list; this explicit treatment is the strict metrics'.
    """
    if not isinstance(calls, Mapping):
        return None
    apis, params = calls.get("API"), calls.get("parameters")
    if not isinstance(apis, list) or not all(isinstance(a, str) for a in apis):
        return None
    if isinstance(params, dict) and len(apis) == 1:
        params = [params]
    if params == [] and apis:
        params = [{} for _ in apis]
    if not isinstance(params, list) or len(params) != len(apis):
        return None
    if not all(isinstance(p, dict) for p in params):
        return None
    return list(zip(apis, params, strict=True))


def structure_match_strict(pred: Any, gold: Mapping[str, Any]) -> bool:
    """Strict structure: same APIs in order (case-sensitive) and exactly the gold keys."""
    pairs = _strict_pairs(pred, gold)
    return pairs is not None and all(set(p) == set(g) for p, g in pairs)


def ast_match_strict(pred: Any, gold: Mapping[str, Any]) -> bool:
    """Strict AST: strict structure, and every value equal with wildcards at any depth."""
    pairs = _strict_pairs(pred, gold)
    return pairs is not None and all(values_match(p, g) for p, g in pairs)


def _strict_pairs(pred: Any, gold: Mapping[str, Any]) -> list[tuple[dict, dict]] | None:
    pred_calls, gold_calls = normalise_calls(pred), normalise_calls(gold)
    if pred_calls is None or gold_calls is None:
        return None
    if [a for a, _ in pred_calls] != [a for a, _ in gold_calls]:
        return None
    return [(p, g) for (_, p), (_, g) in zip(pred_calls, gold_calls, strict=True)]


def values_match(pred: Any, gold: Any) -> bool:
    """Deep equality where a gold ``"$$$"`` or ``{}`` accepts anything, at any depth.

    Objects need exactly the same keys; lists the same length and order; scalars the same
    type and value (``"500"`` differs from ``500``, ``1`` from ``True``).
    """
    if gold == PLACEHOLDER or (isinstance(gold, dict) and not gold):
        return True
    if isinstance(gold, dict):
        return (
            isinstance(pred, dict)
            and set(pred) == set(gold)
            and all(values_match(pred[k], v) for k, v in gold.items())
        )
    if isinstance(gold, list):
        return (
            isinstance(pred, list)
            and len(pred) == len(gold)
            and all(values_match(p, g) for p, g in zip(pred, gold, strict=True))
        )
    return type(pred) is type(gold) and pred == gold


# --------------------------------------------------------------------------- aggregation


def by_difficulty(
    items: Iterable[tuple[str, float]], denominators: Mapping[str, int] | None = None
) -> dict[str, float]:
    """Per-difficulty means, the overall mean (``all``) and the macro average.

    Args:
        items: ``(difficulty, score)`` per question.
        denominators: fixed counts per difficulty and ``all`` (``PAPER_DENOMINATORS`` to
            match the paper's tables); by default the counts in ``items``.

    Returns:
        ``easy``/``medium``/``hard`` for the difficulties present, ``all``, and ``macro``
        (the plain mean of the per-difficulty scores present). Empty input gives ``{}``.
    """
    sums: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for difficulty, score in items:
        sums[difficulty] += score
        counts[difficulty] += 1
    if not counts:
        return {}
    table = dict(denominators or {**counts, "all": sum(counts.values())})
    result: dict[str, float] = {d: sums[d] / table[d] for d in DIFFICULTIES if counts[d]}
    macro = sum(result.values()) / len(result)
    result["all"] = sum(sums.values()) / table["all"]
    result["macro"] = macro
    return result


# --------------------------------------------------------------------------- stability


def stability_text(output: str) -> str:
    """Normalise one output for stability: lower-case, no whitespace, quotes or backticks."""
    return "".join(ch for ch in output.lower() if not ch.isspace() and ch not in "'\"`")


def canonical_output(calls: Mapping[str, Any] | None) -> str:
    """The text stability compares: the call list as compact JSON (None -> the empty list)."""
    value = calls if calls is not None else {"API": [], "parameters": []}
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def election_stability(outputs: Sequence[str]) -> float:
    """Election stability of one question's N outputs: (F1 - F2) / (N - F2), 0 on a tie.

    F1 and F2 are the counts of the most and second most frequent normalised outputs.
    """
    if not outputs:
        return 0.0
    counts = sorted(Counter(stability_text(o) for o in outputs).values(), reverse=True)
    first, second = counts[0], counts[1] if len(counts) > 1 else 0
    if first == second:
        return 0.0
    return (first - second) / (len(outputs) - second)


def levenshtein_stability(outputs: Sequence[str]) -> float:
    """Mean over runs 2..N of 1 - lev(x0, xi) / max(len); 1 for a single run or two empties."""
    texts = [stability_text(o) for o in outputs]
    if len(texts) < 2:
        return 1.0
    first = texts[0]
    scores = [
        1.0 if not (first or other) else 1 - levenshtein(first, other) / max(len(first), len(other))
        for other in texts[1:]
    ]
    return sum(scores) / len(scores)
