"""The seams a role's answer is scored through: an engine that scores, an adapter that formats.

The in-process llama.cpp engine can score continuations of a prompt (``ScoringEngine``) and
freyr's JSON adapters can give the messages a call would send without calling
(``PromptFormatter``). Strategies read answers from likelihoods only where both hold
(``freyr_dspy.strategies._likelihood``), checked against these protocols rather than by
looking for attributes, so a backend or adapter that adds the capability declares it in one
place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import dspy

__all__ = ["PromptFormatter", "Scores", "ScoringEngine"]


class Scores(Protocol):
    """What an engine's scoring returns (the llama.cpp engine's ``ContinuationScores``)."""

    #: log P(continuation | prompt), one per continuation, in their order.
    logprobs: tuple[float, ...]
    #: Prompt tokens a call would send, and those really evaluated (the rest were cached).
    prompt_tokens: int
    evaluated: int


@runtime_checkable
class ScoringEngine(Protocol):
    """An LM engine that scores continuations of a chat prompt."""

    def score_continuations(
        self, messages: list[dict[str, Any]], continuations: Sequence[str]
    ) -> Scores | None:
        """Log-likelihood of each continuation as the start of the answer to ``messages``."""
        ...


@runtime_checkable
class PromptFormatter(Protocol):
    """An adapter that gives the messages a call would send, without calling the model."""

    def format_for(
        self,
        lm: dspy.BaseLM,
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The messages one call to ``lm`` sends."""
        ...
