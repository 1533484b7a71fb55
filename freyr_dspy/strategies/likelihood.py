"""A role's answer read from the model's likelihoods instead of from the text it writes.

Some decisions are a choice among a few known answers (which tool comes first, ``true`` or
``false``): the in-process llama.cpp engine can score each answer as the start of the role's
reply, and the strategy then decides from the scores (``calibration``, ``scored_confirm``).
These helpers give a role's prompt exactly as the role would send it and the engine's scorer;
with a model that cannot score, or an adapter whose answer is not JSON, there is no scorer
and the role is asked as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import dspy

from freyr_dspy.prompting.contracts import Contract, with_contract
from freyr_dspy.prompting.demo_pool import demos_for
from freyr_dspy.schemas import RoleUsage
from freyr_dspy.strategies.run import lm_of

__all__ = ["Scorer", "Scores", "role_messages", "role_scorer", "scoring_usage"]


class Scores(Protocol):
    """What an engine's scoring returns (the llama.cpp engine's ``ContinuationScores``)."""

    #: log P(continuation | prompt), one per continuation, in their order.
    logprobs: tuple[float, ...]
    #: Prompt tokens a call would send, and those really evaluated (the rest were cached).
    prompt_tokens: int
    evaluated: int


#: ``scorer(messages, continuations)``: the log-likelihood of each continuation, or None.
Scorer = Callable[[list[dict[str, Any]], Sequence[str]], Scores | None]


def role_scorer(role: dspy.Module) -> Scorer | None:
    """The role's model's ``score_continuations``, when it has one and answers in JSON.

    The answers scored start like the role's JSON answer (``{"intents": ["``), which only the
    JSON adapters (``lean``, ``json``) write.
    """
    adapter = dspy.settings.adapter
    json_answer = isinstance(adapter, dspy.JSONAdapter) and hasattr(adapter, "format_for")
    scorer = getattr(getattr(lm_of(role), "engine", None), "score_continuations", None)
    return scorer if json_answer and callable(scorer) else None


def role_messages(role: Any, contract: Contract, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat messages the role sends for ``inputs``, formatted by the current adapter."""
    predict = role.predict
    signature = with_contract(predict.signature, contract)
    messages: list[dict[str, Any]] = dspy.settings.adapter.format_for(
        lm_of(role), signature, demos_for(predict, inputs), inputs
    )
    return messages


def scoring_usage(scored: Sequence[Scores], seconds: float) -> RoleUsage:
    """The usage of some scorings, as one role's: one model call and its prompt each."""
    sent = sum(s.prompt_tokens for s in scored)
    evaluated = sum(s.evaluated for s in scored)
    return RoleUsage(
        lm_calls=len(scored),
        input_tokens=sent,
        cached_input_tokens=max(sent - evaluated, 0),
        seconds=seconds,
    )
