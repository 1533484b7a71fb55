"""Replies grounded in results: what the summary is shown, and the check on what it writes.

The summary role writes the reply from the calls' outcomes. Shown only the calls made, a small
model reports the asks that were never called too, with results it makes up ("100 USD is
1400 EUR" when only the weather was looked up). So the summary is shown the open asks as not
done (``outcomes_text``), and its reply is checked rather than trusted: a number it states
that neither the request nor an outcome gives is an invented result, and the reply is then
written from the outcomes themselves (``composed_reply``), which claims nothing. A sentence
no call stands behind ("Booked a table for two at 8pm." after a weather call,
``_claims.unbacked_sentences``) is dropped, and the part of the request it claimed becomes an
ask not done. An open ask the reply does not name is added to it in one sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from freyr_dspy.schemas import CallRecord, OpenAsk
from freyr_dspy.strategies._claims import (
    NOT_DONE,
    asked_in,
    claims_done,
    sentences,
    unbacked_sentences,
)
from freyr_dspy.strategies._grounding import Evidence, unsupported_numbers
from freyr_dspy.strategies._run import Run, call_text

__all__ = ["checked_chat_reply", "checked_reply", "not_done_sentence", "outcomes_text"]

#: The reply in words when nothing was done and the written one made results up.
NOTHING_DONE = "I could not do that with the tools I have."
#: Why an ask a reply claimed was not done.
NO_CALL_REASON = "no call did it"

#: Words a reply uses when it says something was not done.
_DECLINES = re.compile(
    r"\b(not|n't|no|cannot|unable|couldn|could not|can't|isn't|wasn't|without|unavailable)\b",
    re.IGNORECASE,
)


def outcomes_text(calls: Sequence[CallRecord], open_asks: Sequence[OpenAsk]) -> str:
    """The calls made with their outcomes, then the asks not done, one per line."""
    lines = [f"- {call_text(c)}: {c.outcome.render()}" for c in calls]
    lines += [f"{NOT_DONE} {ask.ask!r} ({ask.reason})" for ask in open_asks]
    return "\n".join(lines) or "no tool was called"


def checked_reply(run: Run, reply: str) -> tuple[str, list[str]]:
    """``reply`` if it states only what the request and the outcomes give; else a mended one.

    A reply with a number no outcome gives is replaced by one composed from the outcomes; a
    sentence no call stands behind is dropped and what it claimed named as not done. Returns
    the reply to send and what the written one invented (numbers, then dropped sentences).
    Either way an open ask the reply does not mention is named at its end.
    """
    evidence = Evidence.of(
        run.message, run.conversation, run.state_text(), outcomes_text(run.calls, [])
    )
    invented = unsupported_numbers(reply, evidence)
    claims = [] if invented else unbacked_sentences(reply, run.calls, run.toolbox.names)
    if claims:
        _claimed_asks(run, claims)
        reply = " ".join(s for s in sentences(reply) if s not in claims)
    if invented or not reply.strip():
        reply = composed_reply(run.calls, [])
    return _naming_open_asks(run, reply), [*invented, *claims]


def checked_chat_reply(run: Run, reply: str) -> tuple[str, list[str]]:
    """A reply in words that claims nothing done and states no number the request lacks.

    Used when tools were on offer and no call was made: any number the reply states is a
    result nobody looked up, and any sentence saying something was done ("I've booked your
    table") a claim no call stands behind. Returns the reply to send and what it made up.
    """
    # the catalog counts: "I can set alarms up to 24 hours ahead" quotes a tool, invents nothing
    catalog = run.toolbox.catalog(run.catalog_level) if len(run.toolbox) > 0 else ""
    evidence = Evidence.of(run.message, run.conversation, run.state_text(), catalog)
    invented = unsupported_numbers(reply, evidence)
    if invented:
        if run.open_asks:
            return not_done_sentence(run.open_asks), invented
        return NOTHING_DONE, invented
    claims = [s for s in sentences(reply) if claims_done(s)]
    if not claims:
        return reply, []
    _claimed_asks(run, claims)
    kept = " ".join(s for s in sentences(reply) if s not in claims)
    if not run.open_asks:
        return kept or NOTHING_DONE, claims
    return _naming_open_asks(run, kept or not_done_sentence(run.open_asks)), claims


def _claimed_asks(run: Run, claims: Sequence[str]) -> None:
    """Record the parts of the request that ``claims`` said were done as asks not done."""
    known = {ask.ask for ask in run.open_asks}
    found = []
    for claim in claims:
        asked = asked_in(run.message, claim)
        if asked is not None and asked not in known:
            known.add(asked)
            found.append(OpenAsk(ask=asked, reason=NO_CALL_REASON))
    if found:
        run.ledger.leave_open([*run.open_asks, *found])


def _naming_open_asks(run: Run, reply: str) -> str:
    """``reply``, with a sentence naming every open ask it does not mention."""
    unmentioned = [ask for ask in run.open_asks if not _mentions(reply, ask)]
    if unmentioned:
        reply = f"{reply.rstrip()} {not_done_sentence(unmentioned)}".strip()
    return reply


def composed_reply(calls: Sequence[CallRecord], open_asks: Sequence[OpenAsk]) -> str:
    """A reply made of the outcomes themselves: what each call returned, what was not done."""
    done = [f"{call.tool}: {_sentence(call.outcome.message)}" for call in calls]
    parts = [" ".join(done)] if done else []
    if open_asks:
        parts.append(not_done_sentence(open_asks))
    return " ".join(parts)


def not_done_sentence(open_asks: Sequence[OpenAsk]) -> str:
    """Name the open asks: ``I could not do "100 USD in EUR" (none of the ... does this).``."""
    listed = "; ".join(f'"{ask.ask}" ({ask.reason})' for ask in open_asks)
    return f"I could not do {listed}."


def _mentions(reply: str, ask: OpenAsk) -> bool:
    """Whether ``reply`` says something about ``ask`` not being done: a decline and its words."""
    if not _DECLINES.search(reply):
        return False
    words = re.findall(r"\w{3,}", ask.ask.casefold())
    text = reply.casefold()
    return not words or any(word in text for word in words)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."
