"""The ``confirm`` role's verdicts read from the model's likelihoods, with a margin.

Asked to write ``true`` or ``false`` for each planned tool, Qwen 1.5B writes ``true`` for a
related tool that cannot do what was asked about as readily as for the right one: greedy
decoding keeps whichever answer is likelier, by any margin. Scored instead, the two answers
tell a sure ``true`` from a hesitant one, and a tool is kept only when ``true`` is at least
``e ** CONFIRM_MARGIN`` times as likely as ``false``.

The prompt is the role's own, with every planned tool, and the verdicts are scored in the
order the role writes them. Scored alone, each tool of a related pair looked asked for (a
send-email tool beside the forward-email tool asked for), where the verdicts written over
both rejected it: against plain FREYR that lost 9 requests of our suite's test file and won 5.
A model that cannot score (any but the in-process llama.cpp engine) gets the role's usual
written verdicts.
"""

from __future__ import annotations

import json
import logging
import time

from freyr_dspy.prompting import NO_CONVERSATION
from freyr_dspy.roles import Role, confirm_contract
from freyr_dspy.schemas import Verdict
from freyr_dspy.strategies._likelihood import Scores, role_messages, role_scorer, scoring_usage
from freyr_dspy.strategies._run import Run

__all__ = ["CONFIRM_MARGIN", "confirm_inputs", "scored_verdicts"]

logger = logging.getLogger(__name__)

#: How much likelier (log space) ``true`` must be than ``false`` for a planned tool to be kept.
#: Chosen on our suite's training requests (``trainsets/calls/train.jsonl``, not the test
#: file) with Qwen 1.5B, the intent role's plans checked where they name several tools: tool
#: sets right for 73 of 91 with written verdicts; scored, 69 at margin 0, 73 at 0.5, 76 at 1.0,
#: 76 at 1.5, 74 at 2.0. ``scripts/bench_margin.py`` replays the choice (results page,
#: docs/results/default-program.md): 1.0 is still the best for plans of several tools on both
#: Qwen models.
CONFIRM_MARGIN = 1.0


def confirm_inputs(run: Run, tools: list[str], *, alone: bool = False) -> dict[str, str]:
    """The ``confirm`` role's inputs for a plan of ``tools``, written or scored alike.

    ``alone``: the message without the earlier turns (``freyr+check_alone``). The margins were
    fitted on requests that stand alone; behind a conversation's turns and results the 1.5B's
    verdicts fell below them ("Now make a note 'Gig on Friday' tagged music": ``create_note``
    at 0.53 with the turns, 2.03 without).
    """
    return {
        "tools": run.toolbox.subset(names=tools).catalog("brief"),
        "conversation": NO_CONVERSATION if alone else run.conversation,
        "message": run.message,
    }


def scored_verdicts(
    run: Run, role: Role, tools: list[str], *, margin: float | None = None, alone: bool = False
) -> dict[str, bool] | None:
    """Tool -> whether the message asks for it, by scored ``true``/``false``; None if unscorable.

    The role's prompt shows every planned tool, as when it writes its verdicts, so a tool is
    judged beside the others (a forward tool beside a send tool). The verdicts are read in the
    order the role would write them, each scored after the ones before it.
    """
    margin = CONFIRM_MARGIN if margin is None else margin
    scorer = role_scorer(role)
    if scorer is None:
        return None
    started = time.perf_counter()
    inputs = confirm_inputs(run, tools, alone=alone)
    messages = role_messages(role, confirm_contract(tools), inputs)
    verdicts: dict[str, bool] = {}
    scored: list[Scores] = []
    logged: list[Verdict] = []
    answer = '{"asked": {'
    for tool in tools:
        lead = answer + (", " if verdicts else "") + json.dumps(tool) + ": "
        scores = scorer(messages, [lead + "true", lead + "false"])
        if scores is None:
            return None
        scored.append(scores)
        likelier = scores.logprobs[0] - scores.logprobs[1]
        verdicts[tool] = likelier >= margin
        logged.append(
            Verdict(tool=tool, margin=round(likelier, 4), kept=verdicts[tool], plan_size=len(tools))
        )
        answer = lead + ("true" if verdicts[tool] else "false")
        logger.debug("confirm %s: log P(true) - log P(false) = %.2f", tool, likelier)
    run.ledger.add_usage(role.role_id, scoring_usage(scored, time.perf_counter() - started))
    run.ledger.judge(logged)
    return verdicts
