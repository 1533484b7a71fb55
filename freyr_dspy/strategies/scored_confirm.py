"""The ``confirm`` role's verdicts read from the model's likelihoods, with a margin.

Asked to write ``true`` or ``false`` for a planned tool, Qwen 1.5B writes ``true`` for a
related tool that cannot do what was asked (a current-weather tool for last Saturday's
weather) almost as readily as for the right one: greedy decoding keeps whichever answer is
likelier, by any margin. Scored instead, the two answers tell a sure ``true`` from a hesitant
one. On our suite's training requests (``trainsets/calls/train.jsonl``, not the test file) the
1.5B's ``log P(true) - log P(false)`` for a planned tool the request asks for was above 1.9 for
all but 5 of 68 requests, where the tools of near misses and the extra related tools of a plan
mostly fell below 1: a tool is kept when ``true`` is at least ``e ** CONFIRM_MARGIN`` times as
likely as ``false``.

Each planned tool is scored alone (the role's prompt with that tool's description), so one
tool's verdict does not lean on another's. A model that cannot score (any but the in-process
llama.cpp engine) gets the role's usual written verdicts.
"""

from __future__ import annotations

import json
import logging
import time

from freyr_dspy.roles.confirm import confirm_contract
from freyr_dspy.strategies.likelihood import Scores, role_messages, role_scorer, scoring_usage
from freyr_dspy.strategies.run import Run

__all__ = ["CONFIRM_MARGIN", "scored_verdicts"]

logger = logging.getLogger(__name__)

#: How much likelier (log space) ``true`` must be than ``false`` for a planned tool to be kept.
#: Chosen on our suite's training requests with Qwen 1.5B: tool sets right for 61 of 91 at 0
#: (keep whatever is likelier, as greedy decoding does), 69 at 0.5, 69 at 1.0, 71 at 1.5;
#: the middle of the plateau.
CONFIRM_MARGIN = 1.0


def scored_verdicts(run: Run, tools: list[str]) -> dict[str, bool] | None:
    """Tool -> whether the message asks for it, by scored ``true``/``false``; None if unscorable."""
    role = run.program.role("confirm")
    scorer = role_scorer(role)
    if scorer is None:
        return None
    started = time.perf_counter()
    verdicts: dict[str, bool] = {}
    scored: list[Scores] = []
    for tool in tools:
        inputs = {
            "tools": run.toolbox.subset(names=[tool]).catalog("brief"),
            "conversation": run.conversation,
            "message": run.message,
        }
        lead = '{"asked": {' + json.dumps(tool) + ": "
        scores = scorer(
            role_messages(role, confirm_contract([tool]), inputs), [lead + "true", lead + "false"]
        )
        if scores is None:
            return None
        scored.append(scores)
        margin = scores.logprobs[0] - scores.logprobs[1]
        verdicts[tool] = margin >= CONFIRM_MARGIN
        logger.debug("confirm %s: log P(true) - log P(false) = %.2f", tool, margin)
    run.add_usage("confirm", scoring_usage(scored, time.perf_counter() - started))
    return verdicts
