"""Which predictor GEPA reflects on next: only ones that ran in the minibatch, in turn.

GEPA's default visits every predictor of the program in turn. A strategy leaves some roles
idle (NLT without a reply never calls ``summary`` or ``chat``; ``parameters`` is idle when
tools take no arguments), and an iteration spent on an idle predictor has no trace to reflect
on: measured on NLT alex, three of every four iterations were lost that way. This selector
(GEPA's ``component_selector`` protocol) takes turns among the predictors that appear in the
minibatch's traces, and falls back to all of them when none does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import dspy

__all__ = ["RanPredictorsSelector"]

#: A predictor's input and output field names: what GEPA never changes (it rewrites
#: instructions), so they identify a predictor across candidates.
FieldKey = tuple[tuple[str, ...], tuple[str, ...]]


def field_key(signature: type[dspy.Signature]) -> FieldKey:
    """The input and output field names of a signature, in order."""
    return tuple(signature.input_fields), tuple(signature.output_fields)


class RanPredictorsSelector:
    """Round robin over the predictors that ran; a GEPA ``component_selector``.

    Args:
        predictors: the program's named predictors (name -> ``dspy.Predict``).
    """

    def __init__(self, predictors: Iterable[tuple[str, dspy.Predict]]) -> None:
        self.keys = {name: field_key(p.signature) for name, p in predictors}
        self.turn = 0

    def __call__(
        self,
        state: Any,
        trajectories: list[Mapping[str, Any]] | None,
        subsample_scores: list[float],
        candidate_idx: int,
        candidate: dict[str, str],
    ) -> list[str]:
        """The one predictor to reflect on in this iteration."""
        ran = {field_key(step[0].signature) for t in trajectories or [] for step in t["trace"]}
        names = [n for n in candidate if self.keys.get(n) in ran] or list(candidate)
        name = names[self.turn % len(names)]
        self.turn += 1
        return [name]
