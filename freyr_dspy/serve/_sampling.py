"""A request's ``temperature``/``top_p``/``seed``/``max_tokens`` laid over the roles' sampling.

While the request runs, every predictor of the program gets a copy of its LM with the
request's values (``dspy.LM.copy`` shares the engine, so no model is loaded again); the
originals come back afterwards. ``temperature``, ``top_p`` and ``seed`` apply to every role.
``max_tokens`` caps the reply in words only (the ``chat`` and ``summary`` roles): the other
roles write JSON sized by their own caps, and cutting it would break the call, not shorten it.

NOTE: a running request has the program to itself (one at a time, or its own copy under
``--concurrency``, ``serve.pool``), so swapping its LMs is safe; the swap is undone even when
the program raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.serve._protocol import ChatRequest

__all__ = ["REPLY_ROLES", "request_sampling", "sampling_of"]

#: The roles whose output is the reply the client reads.
REPLY_ROLES = frozenset({"chat", "summary"})


def sampling_of(request: ChatRequest) -> dict[str, Any]:
    """The sampling values the request sets (``max_tokens`` under its own key)."""
    values = {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "seed": request.seed,
        "max_tokens": request.reply_tokens,
    }
    return {name: value for name, value in values.items() if value is not None}


@contextmanager
def request_sampling(program: FreyrProgram, values: dict[str, Any]) -> Iterator[None]:
    """Run the block with ``values`` laid over each role's sampling, then restore it."""
    if not values:
        yield
        return
    swapped: list[tuple[dspy.Predict, dspy.BaseLM]] = []
    try:
        for role in program.role_names:
            overrides = dict(values)
            if role not in REPLY_ROLES:
                overrides.pop("max_tokens", None)
            if not overrides:
                continue
            for predictor in program.role(role).predictors():
                if predictor.lm is not None:
                    swapped.append((predictor, predictor.lm))
                    predictor.lm = predictor.lm.copy(**overrides)
        yield
    finally:
        for predictor, lm in reversed(swapped):
            predictor.lm = lm
