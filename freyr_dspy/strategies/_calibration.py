"""Calibrated choice of a plan's first tool: the model's likelihood of each name, less its bias.

Small models favour some names whatever the message says: Qwen2.5-Coder-0.5B planned
``create_event``, the first tool of its toolbox, for four office requests that needed another.
Contextual calibration (Zhao et al., 2021, "Calibrate Before Use") measures that bias by asking
the same question with a content-free message and subtracts it. Here the intent role's prompt is
scored twice - with the user's message and with ``N/A`` in its place - and the plan's first tool
becomes the catalog name with the highest ``log P(name | message) - BIAS_WEIGHT * log P(name |
N/A)``.

Only a first *tool* is re-chosen. An answer of ``conversation`` stands: the content-free message
asks for no tool, so its bias toward ``conversation`` is the right answer there, and subtracting
it turned every no-tool request of our suite into a tool call.

It needs a model that can score continuations (the in-process llama.cpp engine); with any other
the plan is left as the intent role wrote it. Both scorings are counted in the intent role's
usage (prompt tokens sent and reused from the prefix cache).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from freyr_dspy.prompting import CONVERSATION, Contract
from freyr_dspy.roles import Role
from freyr_dspy.strategies._likelihood import role_messages, role_scorer, scoring_usage
from freyr_dspy.strategies._run import Run

__all__ = ["BIAS_WEIGHT", "CONTENT_FREE_MESSAGE", "calibrated_first_tool"]

logger = logging.getLogger(__name__)

#: What replaces the user's message to measure the model's bias.
CONTENT_FREE_MESSAGE = "N/A"
#: How much of the measured bias is subtracted (log space). Chosen with Qwen 0.5B on our own
#: tool-selection set (scripts/data/intent_set.json, not the suite we report): 0.25-0.75 made
#: the same choices, right first for 14 of 19 one-tool requests; 0 (no calibration) 12; 1 (the
#: paper's full correction) 13, and 2 of 9 two-tool plans lost.
BIAS_WEIGHT = 0.5
#: The start of the intent role's JSON answer, up to the first name.
_ANSWER_LEAD = '{"intents": ["'


def calibrated_first_tool(
    run: Run, role: Role, intents: list[str], inputs: dict[str, Any], contract: Contract
) -> list[str]:
    """``intents`` with the first tool re-chosen by calibrated likelihood (see the module doc).

    ``role`` is the intent role; ``inputs`` and ``contract`` are those it was called with.
    """
    names = list(run.toolbox.names)
    if not intents or intents[0] == CONVERSATION or len(names) < 2 or _prefix_named(names):
        return intents
    scorer = role_scorer(role)
    if scorer is None:
        return intents
    started = time.perf_counter()
    continuations = [_ANSWER_LEAD + name for name in names]
    free_inputs = {**inputs, "message": CONTENT_FREE_MESSAGE}
    scored = [
        scorer(role_messages(role, contract, call_inputs), continuations)
        for call_inputs in (inputs, free_inputs)
    ]
    with_message, content_free = scored
    if with_message is None or content_free is None:
        return intents
    seconds = time.perf_counter() - started
    run.ledger.add_usage(role.role_id, scoring_usage([with_message, content_free], seconds))
    calibrated = {
        name: given - BIAS_WEIGHT * prior
        for name, given, prior in zip(
            names, with_message.logprobs, content_free.logprobs, strict=True
        )
    }
    best = max(names, key=calibrated.__getitem__)
    if best != intents[0]:
        logger.debug("calibrated first tool: %s instead of %s", best, intents[0])
    return [best, *intents[1:]]


def _prefix_named(names: list[str]) -> bool:
    """Whether a name starts another (``math``, ``math.hypot``).

    The shorter name's likelihood would count the longer one's too: the end of a name is not
    scored.
    """
    return any(a != b and b.startswith(a) for a in names for b in names)
