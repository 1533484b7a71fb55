"""Strategy ``nlt``: Natural Language Tools (Johnson, Pain, West 2025).

selection (think, then YES/NO for every tool) -> for each YES tool: parameters when it has
any, execute, retry on error with feedback -> summary of all outcomes. Several tools may be
selected for one request; no tool selected means a plain chat reply.

``Nlt(respond=False)`` skips the reply's LM call when only the selected calls matter (the NLT
benchmark scores the selected set).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from freyr_dspy.roles import Assessment, Role, assess, render_selection_catalog, selection_contract
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.strategies import register_strategy
from freyr_dspy.strategies._base import PlanningStrategy
from freyr_dspy.strategies._policies import CallPolicy, Policy, changed_settings
from freyr_dspy.strategies._run import Run
from freyr_dspy.strategies._steps import (
    Replies,
    Selection,
    after_calls,
    unknown_tools_failure,
    without_tools,
)
from freyr_dspy.strategies.retry import call_until_exhausted

__all__ = ["Nlt"]

logger = logging.getLogger(__name__)


def select_tools(run: Run, role: Role) -> Assessment:
    """Ask the selector to assess every tool of the run's toolbox, typed by its catalog."""
    prediction = run.call(
        role,
        contract=selection_contract(run.toolbox.names),
        conversation=run.conversation,
        message=run.message,
        tools=render_selection_catalog(run.toolbox, run.catalog_level),
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


class Nlt(PlanningStrategy):
    """Natural Language Tools (see the module docstring).

    Args:
        calling: how selected tools become calls and failed calls are retried
            (``CallPolicy``).
        respond: write a reply after the calls (a summary, or a chat reply when no tool was
            selected). Off, the calls are the whole result and no reply call is paid for.

    Settings (the call policy's fields, as a label writes them: ``nlt+exclude_blamed``):
        exclude_blamed: a retry may not write again a value the last error blamed
            (``freyr_dspy.strategies.retry._blame``).
        choose_listed: a retry of an argument an error blamed must take one of the values
            that error lists for its kind (``freyr_dspy.strategies.retry._blame``).
        require_stated: do not make a call whose required text values share no word with
            the request (``freyr_dspy.strategies._grounding.unstated_required``).
        split_calls: let the parameters role write several calls of any selected tool (the
            extra ones kept only when they differ in values the request states).
        split_listed: the same, for a request that may list several values only.
    """

    tool_selection: Role
    parameters: Role
    summary: Role
    chat: Role

    name = "nlt"
    description = "NLT: think, YES/NO for every tool, then parameters per selected tool, summary"

    policies: ClassVar[Mapping[str, type[Policy]]] = MappingProxyType({"calling": CallPolicy})

    def __init__(self, calling: CallPolicy | None = None, respond: bool = True) -> None:
        super().__init__(("tool_selection", "parameters", "summary", "chat"))
        self.respond = respond
        self.calling = calling or CallPolicy()

    def config(self) -> dict[str, bool]:
        """The settings that differ from the defaults (``respond: False``, others ``True``)."""
        return ({} if self.respond else {"respond": False}) | changed_settings(self.calling)

    def replies(self) -> Replies:
        """The roles that write the reply."""
        return Replies(chat=self.chat, summary=self.summary)

    def select(
        self, run: Run, *, conversation: str | None = None, require_tool: bool = False
    ) -> Selection:
        """Assess every tool YES or NO; the YES tools are the plan.

        ``conversation`` and ``require_tool`` are accepted for the strategy interface: the
        selector always sees the run's turns and may say NO to every tool.
        """
        assessment = select_tools(run, self.tool_selection)
        return Selection(
            list(assessment.selected), list(assessment.unknown), selection_failure(assessment)
        )

    def act(self, run: Run, selection: Selection) -> Result:
        """Call each selected tool (parameters, execute, retries), then reply.

        No tool selected means a chat reply; the run's ``ending`` says whether either is
        written.
        """
        selected = selection.tools
        run.ledger.plan(selected)
        replies = self.replies()
        if not selected:
            return without_tools(run, replies, [], selection.failure)
        skipped = call_until_exhausted(run, self.parameters, selected, self.calling)
        return after_calls(run, replies, selected, selection.failure, skipped)


register_strategy(Nlt)
