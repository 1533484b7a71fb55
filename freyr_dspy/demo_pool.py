"""Demos chosen per request: a role keeps a pool of gold demos and shows the nearest ones.

A fixed pair of demos teaches the answer's format and a label or two. What a small model lacks
for *this* request - that "a new room north of the hall" is ``create_room``, not
``add_corridor`` - is taught best by the training requests that read most like it (the idea of
DSPy's ``KNNFewShot``). The pool is ranked by TF-IDF cosine over the words of the request
field (``message`` or ``question``): deterministic, no model call, nothing to download.

The pool lives on the predictor as the plain-JSON attribute ``demo_pool``
(``{"k": ..., "field": ..., "demos": [...]}``). ``artifacts.program_state`` writes it beside
DSPy's own state, and DSPy's ``Predict.load_state`` sets every extra key back as an attribute,
so a loaded artifact chooses its demos the same way.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import dspy
from dspy.predict.predict import serialize_object

__all__ = [
    "POOL_ATTRIBUTE",
    "attach_pool",
    "demos_for",
    "detach_pool",
    "nearest",
    "pool_size",
    "pool_state",
    "request_field",
]

POOL_ATTRIBUTE = "demo_pool"
#: The input fields that hold the user's request, in the order they are looked for.
REQUEST_FIELDS = ("message", "question")

_WORD = re.compile(r"[a-z0-9]+")


def request_field(signature: type[dspy.Signature]) -> str | None:
    """The signature's input field that holds the user's request, if it has one."""
    return next((name for name in REQUEST_FIELDS if name in signature.input_fields), None)


def attach_pool(predictor: dspy.Predict, demos: Sequence[Mapping[str, Any]], k: int) -> bool:
    """Give ``predictor`` a pool to choose ``k`` demos from per request; False if it cannot.

    A predictor without a request field, or with no demos or ``k`` of 0, keeps its fixed demos.
    """
    field = request_field(predictor.signature)
    if field is None or k <= 0 or not demos:
        return False
    stored = [_plain(demo) for demo in demos if isinstance(demo.get(field), str)]
    if not stored:
        return False
    setattr(predictor, POOL_ATTRIBUTE, {"k": k, "field": field, "demos": stored})
    return True


def detach_pool(predictor: dspy.Predict) -> None:
    """Remove the predictor's pool (it then shows its fixed demos)."""
    if hasattr(predictor, POOL_ATTRIBUTE):
        delattr(predictor, POOL_ATTRIBUTE)


def demos_for(predictor: dspy.Predict, inputs: Mapping[str, Any]) -> list[Any]:
    """The demos to show for ``inputs``: the pool's nearest ones, else the fixed ones."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    if not pool:
        return list(predictor.demos)
    query = inputs.get(pool["field"])
    if not isinstance(query, str):
        return list(predictor.demos)
    texts = [str(demo.get(pool["field"], "")) for demo in pool["demos"]]
    return [pool["demos"][i] for i in nearest(texts, query, pool["k"])]


def pool_state(predictor: dspy.Predict) -> dict[str, Any] | None:
    """The pool as stored in an artifact (plain JSON), or None."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    return dict(pool) if pool else None


def pool_size(predictor: dspy.Predict) -> int:
    """How many demos the predictor's pool holds (0 without one)."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    return len(pool["demos"]) if pool else 0


def nearest(texts: Sequence[str], query: str, k: int) -> list[int]:
    """Indices of the ``k`` texts most like ``query``, least alike first.

    The closest demo goes last, next to the request it resembles. Ties keep the texts' order,
    so the choice is the same on every machine.
    """
    documents = [Counter(_words(text)) for text in texts]
    idf = _idf(documents)
    query_vector = _weights(Counter(_words(query)), idf)
    scores = [_cosine(query_vector, _weights(doc, idf)) for doc in documents]
    ranked = sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:k]
    return list(reversed(ranked))


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _idf(documents: Sequence[Counter[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency: words every request shares weigh least."""
    frequency: Counter[str] = Counter(word for doc in documents for word in doc)
    total = len(documents)
    return {word: math.log((1 + total) / (1 + count)) + 1.0 for word, count in frequency.items()}


def _weights(counts: Counter[str], idf: Mapping[str, float]) -> dict[str, float]:
    # Words no pooled request has cannot make one demo nearer than another: they are dropped.
    return {word: n * idf[word] for word, n in counts.items() if word in idf}


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    dot = sum(weight * b.get(word, 0.0) for word, weight in a.items())
    norm = math.sqrt(sum(w * w for w in a.values())) * math.sqrt(sum(w * w for w in b.values()))
    return dot / norm if norm else 0.0


def _plain(demo: Mapping[str, Any]) -> dict[str, Any]:
    """A demo as JSON-ready values (what DSPy's ``dump_state`` does to fixed demos)."""
    values = demo.toDict() if isinstance(demo, dspy.Example) else dict(demo)
    return {name: serialize_object(value) for name, value in values.items()}
