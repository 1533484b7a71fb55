"""The steps the tool-calling strategies share: what was selected, and the reply after it.

A selecting strategy (``freyr``, ``nlt``) splits into ``select(run) -> Selection`` and
``act(run, selection)``, so that a wrapper (``gated``) can run its inner strategy's selection
on fewer tools and then let that strategy act. The reply is FREYR's: ``chat`` when no tool was
called (``without_tools``), ``summarise`` the outcomes otherwise (``after_calls``); the run's
``ending`` says whether either is written (``Run.ending``). The strategy passes the roles it
owns that write replies (``Replies``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from freyr_dspy.prompting import CONVERSATION
from freyr_dspy.roles import Role
from freyr_dspy.schemas import CallRecord, Failure, OpenAsk, Result
from freyr_dspy.strategies._asks import Ask
from freyr_dspy.strategies._replies import (
    checked_chat_reply,
    checked_reply,
    not_done_sentence,
    outcomes_text,
)
from freyr_dspy.strategies._run import Run, call_text
from freyr_dspy.tools import recorded_outcome

__all__ = [
    "Replies",
    "Selection",
    "after_calls",
    "chat",
    "still_missing",
    "summarise",
    "unknown_tools_failure",
    "without_tools",
]


@dataclass(frozen=True)
class Selection:
    """What a selection step chose: the plan as written, names it wrote that are not tools.

    ``plan`` may hold ``conversation`` (FREYR's "no tool"); ``tools`` is the plan without it.
    ``failure`` explains a plan with no tool in it (a selection that could not be read, or one
    that named only unknown tools). ``spare`` counts, per planned tool, the calls it may get
    beyond those the plan names, each kept only when the request states what sets it apart
    (``freyr+refill``: the entries the plan check dropped).
    """

    plan: list[str]
    unknown: list[str]
    failure: Failure | None = None
    spare: Mapping[str, int] = field(default_factory=dict)
    #: The request's asks, when the plan was made from them (``freyr+asks``).
    asks: tuple[Ask, ...] = ()

    @property
    def tools(self) -> list[str]:
        """The planned tool calls, in order (a tool planned twice appears twice)."""
        return [name for name in self.plan if name != CONVERSATION]

    def words(self) -> dict[str, list[str]]:
        """Tool -> the words of each of its asks, when the request asks several things.

        Empty for a request of one ask: its call is written from the whole message.
        """
        if len(self.asks) < 2:
            return {}
        asked: dict[str, list[str]] = {}
        for ask in self.asks:
            if ask.tool is not None and ask.tool in self.plan:
                asked.setdefault(ask.tool, []).append(ask.words)
        return asked


@dataclass(frozen=True)
class Replies:
    """The roles a strategy replies with: ``chat`` in words, ``summary`` after calls."""

    chat: Role
    summary: Role


def still_missing(selection: Selection, calls: Sequence[CallRecord]) -> Selection:
    """``selection`` without the calls already made: each made call covers one planned entry.

    The entries left, in order, with their asks; a plan of no tool leaves nothing.
    """
    made = Counter(call.tool for call in calls)
    left: list[str] = []
    for name in selection.tools:
        if made[name] > 0:
            made[name] -= 1
        else:
            left.append(name)
    kept = tuple(ask for ask in selection.asks if ask.tool in left)
    return Selection(left, [], asks=kept)


def chat(run: Run, role: Role, intents: list[str], failure: Failure | None = None) -> Result:
    """Reply without tools (FREYR's LLM_chat).

    When tools were on offer and none ran - a plan that named tools, none of them called, open
    asks, or a plan of no tool at all - the reply is checked like a summary
    (``checked_chat_reply``): asked for the weather and a rate it could not look up, a small
    model answered with both; offered a weather tool it chose not to call, the 0.5B answered
    "around 22 °C". With no tool on offer the reply is the model's own answer, unchecked.
    """
    prediction = run.call(
        role, conversation=run.conversation, message=run.message, state=run.state_text()
    )
    if run.open_asks or CONVERSATION not in intents or len(run.toolbox) > 0:
        reply, invented = checked_chat_reply(run, prediction.reply)
        return run.result(reply, intents, failure, unsupported=invented)
    return run.result(prediction.reply, intents, failure)


def summarise(
    run: Run,
    role: Role,
    intents: list[str],
    failure: Failure | None = None,
    skipped: list[str] | None = None,
    *,
    first_call: int = 0,
) -> Result:
    """Report the outcomes of the calls made (FREYR's LLM_summary).

    The summary sees every call made; the failure counts those from ``first_call`` on. A run
    that ends before its reply (``Run.ending``) gets no summary and an empty reply, and one
    whose every call was recorded rather than run gets the calls listed (``recorded_reply``).
    """
    failure = failure or exhausted_failure(run, skipped, first_call=first_call)
    if run.ending != "reply":
        return run.result("", intents, failure)
    if run.calls and all(call.outcome == recorded_outcome(call.tool) for call in run.calls):
        return run.result(recorded_reply(run.calls, run.open_asks), intents, failure)
    prediction = run.call(
        role,
        message=run.message,
        outcomes=outcomes_text(run.calls, run.open_asks),
        state=run.state_text(),
    )
    reply, invented = checked_reply(run, prediction.reply)
    return run.result(reply, intents, failure, unsupported=invented)


def recorded_reply(calls: Sequence[CallRecord], open_asks: Sequence[OpenAsk] = ()) -> str:
    """The reply when every call was recorded and none run: the calls, and no outcome.

    A tool without a function (an OpenAI tool dict, a spec read from a file) records its
    call instead of running it. Asked to report such outcomes, the summary role wrote results
    nobody computed: "The area of the triangle is 25 square meters." for a Heron's-formula
    call with a third side the user never gave (Qwen 1.5B). Listing the calls costs no model
    call and claims nothing.
    """
    listed = "; ".join(call_text(call) for call in calls)
    reply = f"Prepared, not run (these tools have no function here): {listed}."
    return f"{reply} {not_done_sentence(open_asks)}" if open_asks else reply


def without_tools(
    run: Run, replies: Replies, intents: list[str], failure: Failure | None = None
) -> Result:
    """The result when no tool is to be called: a chat reply, unless the run ends on nothing."""
    if run.ending == "nothing":
        return run.result("", intents, failure)
    return chat(run, replies.chat, intents, failure)


def after_calls(
    run: Run,
    replies: Replies,
    intents: list[str],
    failure: Failure | None = None,
    skipped: list[str] | None = None,
    *,
    first_call: int = 0,
) -> Result:
    """The result after the calls: their summary, where the run ends on a reply.

    ``first_call`` as for ``summarise``.
    """
    return summarise(run, replies.summary, intents, failure, skipped, first_call=first_call)


def exhausted_failure(
    run: Run, skipped: list[str] | None, *, first_call: int = 0
) -> Failure | None:
    """Name the calls given up on, those that exhausted their retries, and those skipped.

    Calls before ``first_call`` belong to a plan that was replaced, and are not counted.
    """
    parts = []
    calls = run.calls[first_call:]
    gave_up = [c.tool for c in calls if c.gave_up]
    exhausted = [c.tool for c in calls if c.exhausted]
    if gave_up:
        parts.append(f"gave up on {', '.join(gave_up)}")
    if exhausted:
        parts.append(f"retries exhausted for {', '.join(exhausted)}")
    if skipped:
        parts.append(f"not attempted: {', '.join(skipped)}")
    if not parts:
        return None
    return Failure(kind="retries" if exhausted else "gave_up", detail="; ".join(parts))


def unknown_tools_failure(who: str, unknown: list[str]) -> Failure | None:
    """The failure of a plan that named only tools the catalog lacks (None if it named none)."""
    if not unknown:
        return None
    return Failure(kind="unknown_tool", detail=f"{who} named no known tool: {', '.join(unknown)}")
