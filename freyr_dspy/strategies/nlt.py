"""Strategy ``nlt``: Natural Language Tools (Johnson, Pain, West 2025).

selection (think, then YES/NO for every tool) -> for each YES tool: parameters when it has
any, execute, retry on error with feedback -> summary of all outcomes. Several tools may be
selected for one request; no tool selected means a plain chat reply.

``Nlt(respond=False)`` skips the reply's LM call when only the selected calls matter (the NLT
benchmark scores the selected set).
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
from freyr_dspy.strategies.base import Run, StrategyModule, unknown_tools_failure
from freyr_dspy.strategies.freyr import chat, exhausted_failure, summarise

__all__ = ["Nlt", "act_and_reply", "run_nlt", "select_tools", "selection_failure"]

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


def act_and_reply(
    run: Run, selected: list[str], failure: Failure | None = None, *, respond: bool = True
) -> Result:
    """Call each selected tool (parameters, execute, retries), then reply.

    No tool selected means a chat reply. With ``respond=False`` no reply is written: the
    calls are the result.
    """
    run.intents = list(selected)
    if not selected:
        return chat(run, [], failure) if respond else run.result("", [], failure)
    skipped = run.call_until_exhausted(selected)
    if respond:
        return summarise(run, selected, failure, skipped)
    return run.result("", selected, failure or exhausted_failure(run, skipped))


def run_nlt(run: Run, *, respond: bool = True) -> Result:
    """Select with YES/NO, call the selected tools, then reply (unless ``respond`` is off)."""
    assessment = select_tools(run)
    selected, failure = list(assessment.selected), selection_failure(assessment)
    return act_and_reply(run, selected, failure, respond=respond)


class Nlt(StrategyModule):
    """Natural Language Tools (see the module docstring).

    Args:
        respond: write a reply after the calls (a summary, or a chat reply when no tool was
            selected). Off, the calls are the whole result and no reply call is paid for.
    """

    name = "nlt"
    description = "NLT: think, YES/NO for every tool, then parameters per selected tool, summary"

    def __init__(self, respond: bool = True) -> None:
        super().__init__(("tool_selection", "parameters", "summary", "chat"))
        self.respond = respond

    def config(self) -> dict[str, bool]:
        """``{"respond": False}`` when no reply is written, else nothing."""
        return {} if self.respond else {"respond": False}

    def run(self, run: Run) -> Result:
        """Select, call, reply."""
        return run_nlt(run, respond=self.respond)


register_strategy(Nlt)
