"""Strategy ``nlt``: Natural Language Tools (Johnson, Pain, West 2025).

selection (think, then YES/NO for every tool) -> for each YES tool: parameters when it has
any, execute, retry on error with feedback -> summary of all outcomes. Several tools may be
selected for one request; no tool selected means a plain chat reply.

``program.options``: ``respond`` (default True) - set it to False when only the selected
calls matter (the NLT benchmark scores the selected set), to skip the reply's LM call.
"""

from __future__ import annotations

import logging

from freyr_dspy.roles.tool_selection import (
    Assessment,
    assess,
    render_selection_catalog,
    selection_contract,
)
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.strategies import register_strategy
from freyr_dspy.strategies.base import FunctionStrategy, Run, unknown_tools_failure
from freyr_dspy.strategies.freyr import chat, exhausted_failure, summarise

__all__ = ["NLT", "act_and_reply", "run_nlt", "select_tools", "selection_failure"]

logger = logging.getLogger(__name__)


def select_tools(run: Run) -> Assessment:
    """Ask the selector to assess every tool of the run's toolbox, typed by its catalog."""
    prediction = run.call_role(
        "tool_selection",
        contract=selection_contract(run.toolbox.names),
        conversation=run.conversation,
        message=run.message,
        tools=render_selection_catalog(run.toolbox, run.program.catalog_level),
    )
    assessment = assess(prediction, run.toolbox.names)
    if assessment.unknown:
        logger.debug("selector wrote unknown tools: %s", ", ".join(assessment.unknown))
    return assessment


def selection_failure(assessment: Assessment) -> Failure | None:
    """Describe a selection that could not be read at all, for ``Result.failure``."""
    if assessment.verdicts:
        return None
    if assessment.unknown:
        return unknown_tools_failure("selection", list(assessment.unknown))
    return Failure(
        kind="parse", detail="selection could not be parsed: no tool was assessed YES or NO"
    )


def act_and_reply(run: Run, selected: list[str], failure: Failure | None = None) -> Result:
    """Call each selected tool (parameters, execute, retries), then reply.

    No tool selected means a chat reply. With ``options["respond"] = False`` no reply is
    written: the calls are the result.
    """
    respond = bool(run.program.options.get("respond", True))
    run.intents = list(selected)
    if not selected:
        return chat(run, [], failure) if respond else run.result("", [], failure)
    skipped = run.call_until_exhausted(selected)
    if respond:
        return summarise(run, selected, failure, skipped)
    return run.result("", selected, failure or exhausted_failure(run, skipped))


def run_nlt(run: Run) -> Result:
    """Select with YES/NO, call the selected tools, then reply."""
    assessment = select_tools(run)
    return act_and_reply(run, list(assessment.selected), selection_failure(assessment))


NLT = FunctionStrategy(
    name="nlt",
    roles=("tool_selection", "parameters", "summary", "chat"),
    fn=run_nlt,
    description="NLT: think, YES/NO for every tool, then parameters per selected tool, summary",
)

register_strategy(NLT)
