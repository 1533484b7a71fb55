"""Planning from the request's asks: each thing asked, in its words, mapped to a tool or none.

``freyr+asks`` plans with the ``asks`` role instead of the intent role
(``freyr_dspy.roles._asks``). Each ask is one planned call of its tool, so two asks of one tool
are two calls, each written from its own words (``asked_words``); an ask that names no tool,
or whose tool the plan check rejects, is an *open ask*: no call is made for it, the other asks
still run, and the reply names it as not done (``freyr_dspy.strategies._replies``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from freyr_dspy.prompting import CONVERSATION, match_names
from freyr_dspy.roles import NO_TOOL, Role, asks_contract
from freyr_dspy.schemas import OpenAsk
from freyr_dspy.strategies._run import Run

__all__ = ["Ask", "open_asks", "plan_of", "recognise_asks"]

#: Most asks one request may plan (as ``MAX_INTENTS`` for the intent role).
MAX_ASKS = 8
#: Why an ask with no tool was not done.
NO_TOOL_REASON = "none of the offered tools does this"


@dataclass(frozen=True)
class Ask:
    """One thing the request asks for: its words, and the tool that does it (None: none)."""

    words: str
    tool: str | None


def recognise_asks(
    run: Run, role: Role, *, conversation: str | None = None, require_tool: bool = False
) -> tuple[list[Ask], list[str]]:
    """Ask the ``asks`` role; return the asks in order and the tool names it wrote unknown.

    An ask naming a tool the catalog lacks keeps its words with no tool (it is open).
    ``conversation`` replaces the run's earlier turns in the prompt; ``require_tool`` offers
    no ``none``, so every ask names a tool.
    """
    names = run.toolbox.names
    prediction = run.call(
        role,
        contract=asks_contract(names, MAX_ASKS, allow_none=not require_tool),
        conversation=run.conversation if conversation is None else conversation,
        message=run.message,
        tools=run.toolbox.catalog(run.catalog_level),
        state=run.state_text(),
    )
    asks: list[Ask] = []
    unknown: list[str] = []
    for entry in prediction.asks[:MAX_ASKS]:
        tool = entry["tool"]
        known, missing = match_names([tool], names, special=(NO_TOOL,))
        unknown.extend(missing)
        found = known[0] if known and known[0] != NO_TOOL else None
        asks.append(Ask(words=entry["ask"] or run.message, tool=found))
    run.ledger.plan(plan_of(asks))
    return asks, unknown


def plan_of(asks: Sequence[Ask]) -> list[str]:
    """The planned calls of ``asks`` (one per ask with a tool); ``conversation`` when none."""
    tools = [ask.tool for ask in asks if ask.tool is not None]
    return tools or [CONVERSATION]


def open_asks(asks: Sequence[Ask], kept: Sequence[str]) -> list[OpenAsk]:
    """The asks no call is planned for: no tool, or a tool the plan check rejected.

    ``kept`` is the plan after the check; each kept entry covers one ask of its tool, in order.
    """
    left = Counter(name for name in kept if name != CONVERSATION)
    found: list[OpenAsk] = []
    for ask in asks:
        if ask.tool is not None and left[ask.tool] > 0:
            left[ask.tool] -= 1
        else:
            found.append(OpenAsk(ask=ask.words, reason=NO_TOOL_REASON))
    return found


def asked_words(asks: Sequence[Ask], tool: str) -> list[str]:
    """The words of each ask of ``tool``, in order (what each of its calls is written from)."""
    return [ask.words for ask in asks if ask.tool == tool]
