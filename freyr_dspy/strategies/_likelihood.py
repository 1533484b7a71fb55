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
from typing import Any

import dspy

from freyr_dspy.prompting import (
    Contract,
    PromptFormatter,
    Scores,
    ScoringEngine,
    demos_for,
    with_contract,
)
from freyr_dspy.schemas import RoleUsage
from freyr_dspy.strategies._run import lm_of

__all__ = ["Scores", "role_messages", "role_scorer", "scoring_usage"]


#: ``scorer(messages, continuations)``: the log-likelihood of each continuation, or None.
Scorer = Callable[[list[dict[str, Any]], Sequence[str]], Scores | None]


def role_scorer(role: dspy.Module) -> Scorer | None:
    """The role's model's ``score_continuations``, when it has one and answers in JSON.

    The answers scored start like the role's JSON answer (``{"intents": ["``), which only the
    JSON adapters (``lean``, ``json``) write.
    """
    adapter = dspy.settings.adapter
    json_answer = isinstance(adapter, dspy.JSONAdapter) and isinstance(adapter, PromptFormatter)
    engine = getattr(lm_of(role), "engine", None)  # a dspy.LM's engine; a string for litellm
    return engine.score_continuations if json_answer and isinstance(engine, ScoringEngine) else None


def role_messages(role: Any, contract: Contract, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The chat messages the role sends for ``inputs``, formatted by the current adapter."""
    predict = role.predict
    signature = with_contract(predict.signature, contract)
    adapter = dspy.settings.adapter
    if not isinstance(adapter, PromptFormatter):
        raise TypeError(f"{type(adapter).__name__} cannot format a prompt without calling")
    return adapter.format_for(lm_of(role), signature, demos_for(predict, inputs), inputs)


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
