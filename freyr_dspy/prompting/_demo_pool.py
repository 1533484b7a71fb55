"""Demos chosen per request: a role keeps a pool of gold demos and shows the nearest ones.

A fixed pair of demos teaches the answer's format and a label or two. What a small model lacks
for *this* request - that "a new room north of the hall" is ``create_room``, not
``add_corridor`` - is taught best by the training requests that read most like it (the idea of
DSPy's ``KNNFewShot``). The pool is ranked by TF-IDF cosine over the words of the request
field (``message`` or ``question``): deterministic, no model call, nothing to download.

A demo never answers its own request: a pooled demo whose request is the one being answered
is skipped, so an optimizer scoring the program on its training requests sees what a new
request would get (leave-one-out: the compile scores the very pool it ships this way). A
request that shares no word with the pool gets the fixed demos.

A ``contrastive`` pool (what ``freyr compile`` builds) chooses with what each demo was made
for (``DEMO_META``: the tools its prompt offered, the decision its answer makes). Only demos
of the request's own tools are shown - the toolbox the prompt offers, or for the parameters
role the very tool being called - so a demo teaches this toolbox's conventions, never another
toolbox's habit of calling; among them the nearest, plus the nearest demo of another decision
when the nearest all make one (a request no tool fits beside ones that call, a ``false``
verdict beside ``true`` ones), so no demo set teaches "always call". A request whose tools no
demo was made for gets the fixed demos (none, in a compiled pool): the preset as it is.

The pool lives on the predictor as the attribute ``demo_pool``, a ``DemoPool`` dumped to
plain JSON. ``artifacts.program_state`` writes it beside DSPy's own state, DSPy's
``Predict.load_state`` sets every extra key back as an attribute, and ``check_pool`` validates
what a file brought back.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import dspy
from dspy.predict.predict import serialize_object
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freyr_dspy.tools import catalog_names

__all__ = [
    "DEMO_META",
    "POOL_ATTRIBUTE",
    "REQUEST_FIELDS",
    "RequestDemos",
    "attach_pool",
    "check_pool",
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
#: The input fields whose text lists the tools a prompt offers (a catalog, or one tool's spec).
TOOL_FIELDS = ("tools", "tool")
#: A pooled demo's key for what it was made for: ``{"scope": [tool names its prompt offered],
#: "decision": "no-call" | "one" | "several" | "keeps" | "rejects" | "other"}``. Adapters
#: format the signature's fields only, so the key never reaches a prompt.
DEMO_META = "_demo"

Selection = Literal["nearest", "contrastive"]


class RequestDemos(list[Any]):
    """Demos a pool chose for one request (a plain list holds a role's fixed demos).

    The lean adapter lays a prompt with these out so that requests to one toolbox still
    share their start (``freyr_dspy.prompting._adapters.LeanAdapter.format``).
    """


_WORD = re.compile(r"[a-z0-9]+")


class DemoPool(BaseModel):
    """The demos a role chooses from, how many it shows, and the field it matches on."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(ge=1)
    field: str
    demos: list[dict[str, Any]]
    #: ``nearest``: the k nearest of all demos; ``contrastive``: see the module docstring.
    select: Selection = "nearest"


def request_field(signature: type[dspy.Signature]) -> str | None:
    """The signature's input field that holds the user's request, if it has one."""
    return next((name for name in REQUEST_FIELDS if name in signature.input_fields), None)


def attach_pool(
    predictor: dspy.Predict,
    demos: Sequence[Mapping[str, Any]],
    k: int,
    select: Selection = "nearest",
) -> bool:
    """Give ``predictor`` a pool to choose ``k`` demos from per request; False if it cannot.

    A predictor without a request field, or with no demos or ``k`` of 0, keeps its fixed demos.
    """
    field = request_field(predictor.signature)
    if field is None or k <= 0:
        return False
    stored = [_plain(demo) for demo in demos if isinstance(demo.get(field), str)]
    if not stored:
        return False
    pool = DemoPool(k=k, field=field, demos=stored, select=select)
    setattr(predictor, POOL_ATTRIBUTE, pool.model_dump(mode="json"))
    return True


def detach_pool(predictor: dspy.Predict) -> None:
    """Remove the predictor's pool (it then shows its fixed demos)."""
    if hasattr(predictor, POOL_ATTRIBUTE):
        delattr(predictor, POOL_ATTRIBUTE)


def check_pool(predictor: dspy.Predict) -> None:
    """Validate a pool read from a file.

    Raises:
        ValueError: when it is malformed or matches on a field the signature lacks.
    """
    raw = getattr(predictor, POOL_ATTRIBUTE, None)
    if raw is None:
        return
    try:
        pool = DemoPool.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(f"malformed demo pool: {exc.errors()[0]['msg']}") from exc
    if pool.field != request_field(predictor.signature):
        raise ValueError(f"demo pool matches on {pool.field!r}, not a request field of the role")


def demos_for(predictor: dspy.Predict, inputs: Mapping[str, Any]) -> list[Any]:
    """The demos to show for ``inputs``: the pool's nearest ones, else the fixed ones."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    query = inputs.get(pool["field"]) if pool else None
    if not pool or not isinstance(query, str):
        return list(predictor.demos)
    others = [demo for demo in pool["demos"] if demo.get(pool["field"]) != query]
    if pool.get("select") == "contrastive":
        fitting = [demo for demo in others if _fits(demo, offered_tools(inputs))]
        chosen = contrastive(fitting, query, pool["field"], pool["k"])
        return RequestDemos(fitting[i] for i in chosen) if chosen else list(predictor.demos)
    chosen = nearest([str(demo[pool["field"]]) for demo in others], query, pool["k"])
    return RequestDemos(others[i] for i in chosen) if chosen else list(predictor.demos)


def offered_tools(inputs: Mapping[str, Any]) -> set[str]:
    """The tool names a role's inputs offer (its catalog, or the spec of the tool called)."""
    return {
        name
        for f in TOOL_FIELDS
        if isinstance(inputs.get(f), str)
        for name in catalog_names(inputs[f])
    }


def _fits(demo: Mapping[str, Any], offered: set[str]) -> bool:
    """Whether a demo was made for the tools a request offers (half of the smaller set shared).

    An intent demo's scope is its toolbox, a confirm demo's too (the request offers the
    planned tools, a part of it), a parameters demo's the one tool it called.
    """
    scope = set((demo.get(DEMO_META) or {}).get("scope") or ())
    if not scope or not offered:
        return False
    return 2 * len(scope & offered) >= min(len(scope), len(offered))


def contrastive(demos: Sequence[Mapping[str, Any]], query: str, field: str, k: int) -> list[int]:
    """Indices of ``k`` demos: the nearest, with one of another decision if they all make one.

    Least alike first, as ``nearest``. When the ``k`` nearest all make one decision and some
    demo makes another, the last-ranked of them gives way to the nearest demo of another
    decision, so the demos shown never teach a single answer.
    """
    ranked = list(reversed(nearest([str(d.get(field, "")) for d in demos], query, len(demos))))
    if not ranked:
        ranked = list(range(len(demos)))
    chosen = ranked[:k]
    decisions = {_decision(demos[i]) for i in chosen}
    if len(decisions) == 1 and len(chosen) > 1:
        other = next((i for i in ranked[k:] if _decision(demos[i]) not in decisions), None)
        if other is not None:
            chosen = [*chosen[:-1], other]
    return list(reversed(chosen))


def _decision(demo: Mapping[str, Any]) -> str:
    return str((demo.get(DEMO_META) or {}).get("decision") or "other")


def pool_state(predictor: dspy.Predict) -> dict[str, Any] | None:
    """The pool as stored in an artifact (plain JSON), or None."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    return dict(pool) if pool else None


def pool_size(predictor: dspy.Predict) -> int:
    """How many demos the predictor's pool holds (0 without one)."""
    pool = getattr(predictor, POOL_ATTRIBUTE, None)
    return len(pool["demos"]) if pool else 0


def nearest(texts: Sequence[str], query: str, k: int) -> list[int]:
    """Indices of the ``k`` texts most like ``query``, least alike first; [] if none is alike.

    The closest demo goes last, next to the request it resembles. Ties keep the texts' order,
    so the choice is the same on every machine.
    """
    documents = [Counter(_words(text)) for text in texts]
    idf = _idf(documents)
    query_vector = _weights(Counter(_words(query)), idf)
    scores = [_cosine(query_vector, _weights(doc, idf)) for doc in documents]
    if not any(scores):
        return []
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
