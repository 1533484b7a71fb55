"""How a strategy answers a ``Request``: the calls for the caller to make, or a reply in words.

The caller makes the calls (the tools are specs; the calls are recorded, not executed) and
comes back with their results. Two ways, by what the strategy can do:

``answer_in_steps``, for strategies that plan before they call (``PlanningStrategy``):

* A first turn runs the whole strategy ending on its calls; a request that needs no tool gets
  its reply. When every call it tried failed (arguments the schema refuses, every attempt),
  the chat role replies instead. A later call whose required values the request never states
  waits for the results of the calls before it (``deferred``): "find my city, then its
  weather" sends the lookup first, not a weather call with an invented city.
* Results of calls sent while others waited (``Request.replan``), or under ``required``, are
  planned again with the results shown (``next_calls``): calls the plan still lacks are made,
  up to the strategy's ``rounds``; otherwise the summary role reports the results. A call
  already answered is never made again.
* ``tool_choice: none`` (or no tools) has the chat role reply; ``named`` calls the tool
  without asking the intent role; ``required`` plans again with a tool required when the
  program made no call.

``answer_whole``, for strategies that only run whole (``native``, ``prompted``): each mode is
the whole strategy over the tools it allows, its calls not already answered, and a reply in
words over the results when it makes no new call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from freyr_dspy.prompting import CONVERSATION
from freyr_dspy.schemas import CallRecord, OpenAsk, Result
from freyr_dspy.strategies._asks import open_asks
from freyr_dspy.strategies._grounding import unstated_required
from freyr_dspy.strategies._references import refers_back
from freyr_dspy.strategies._request import Request, RunStarter
from freyr_dspy.strategies._run import ModelFailure, Run
from freyr_dspy.strategies._steps import Replies, Selection, chat, still_missing, summarise
from freyr_dspy.tools import Toolbox

__all__ = ["answer_in_steps", "answer_whole", "attempt", "waits_for_results"]

NO_TOOLS = Toolbox([])


class Runner(Protocol):
    """A strategy that runs whole (``StrategyModule``)."""

    def run(self, run: Run) -> Result:
        """Handle one request."""
        ...


class Planner(Runner, Protocol):
    """A strategy that plans before it calls (``PlanningStrategy``)."""

    @property
    def rounds(self) -> int:
        """Planning rounds a request may take."""
        ...

    def select(
        self, run: Run, *, conversation: str | None = None, require_tool: bool = False
    ) -> Selection:
        """Plan the calls of one request."""
        ...

    def act(self, run: Run, selection: Selection) -> Result:
        """Make the calls of ``selection``, then reply."""
        ...

    def replies(self) -> Replies:
        """The roles the strategy replies with."""
        ...


def attempt(run: Run, step: Callable[[Run], Result]) -> Result:
    """Run ``step`` on ``run``; a model failure ends it with what the run had done so far."""
    try:
        return step(run)
    except ModelFailure as exc:
        return run.result("", run.intents, failure=exc.failure)


def waits_for_results(request: Request, call: CallRecord, before: Sequence[CallRecord]) -> bool:
    """Whether a call of an answer waits for the results of ``before``, the calls before it.

    A call after the first whose required text values the request does not state
    (``unstated_required``) would carry values the model made up: they come from a result.
    So does a call made after a call of another tool whose result the request points back
    at ("... followed by the converted amount": ``refers_back``), even when its other values
    are stated.
    """
    toolbox = request.toolbox
    tool = toolbox.resolve(call.tool) if toolbox is not None else None
    if not before or tool is None or toolbox is None:
        return False
    if unstated_required(tool, call.arguments, request.evidence):
        return True
    earlier = {c.tool for c in before if c.tool != call.tool}
    return any(
        (other := toolbox.resolve(name)) is not None and refers_back(request.message, other)
        for name in earlier
    )


# ------------------------------------------------------------------ strategies that plan


def answer_in_steps(strategy: Planner, request: Request, start: RunStarter) -> Result:
    """Answer ``request`` with a planning strategy's steps (see the module docstring)."""
    toolbox, mode = request.toolbox, request.tool_choice
    if request.answered and toolbox is not None and mode in ("auto", "required"):
        return _after_results(strategy, request, start, toolbox)
    if request.answered and mode in ("auto", "none"):
        return _reply_from_results(strategy, request, start)
    if toolbox is None or mode == "none":
        return _chat_reply(strategy, request, start)
    if mode == "named" and request.function is not None:
        named = toolbox.subset(names=[request.function])
        return _forced_calls(strategy, request, start, named, [request.function])
    result = attempt(start(request.turns, toolbox, "calls"), strategy.run)
    if mode == "required" and not _any_made(result):
        return combined(result, _forced_calls(strategy, request, start, toolbox, None))
    if mode == "auto" and _nothing_to_send(result):
        # Every call the program tried failed: the tools do not do what was asked (a near
        # miss), so the chat role answers in words rather than the caller getting nothing.
        return combined(result, _chat_reply(strategy, request, start))
    return deferred(result, request)


def deferred(result: Result, request: Request) -> Result:
    """``result`` without the calls that wait for the results of the calls before them."""
    kept, waiting = [], []
    for index, call in enumerate(result.calls):
        if waits_for_results(request, call, result.calls[:index]):
            waiting.append(call.tool)
        else:
            kept.append(call)
    if not waiting:
        return result
    return result.model_copy(update={"calls": kept, "waiting": [*result.waiting, *waiting]})


def _after_results(
    strategy: Planner, request: Request, start: RunStarter, toolbox: Toolbox
) -> Result:
    """The next calls, when the results leave some to make; else the reply."""
    opened: list[OpenAsk] = []
    replan = request.tool_choice == "required" or request.replan
    if replan and request.rounds < strategy.rounds:
        more, opened = _next_calls(strategy, request, start, toolbox)
        if more.calls:
            return more
    left = toolbox.subset(names=[n for n in toolbox.names if n not in request.answered_tools])
    if request.tool_choice == "required" and len(left) > 0:
        forced = _forced_calls(strategy, request, start, left, None)
        if _any_made(forced):
            return forced
    return _reply_from_results(strategy, request, start, opened)


def _next_calls(
    strategy: Planner, request: Request, start: RunStarter, toolbox: Toolbox
) -> tuple[Result, list[OpenAsk]]:
    """The calls a plan with the results shown still lacks, and its open asks.

    The open asks are what no tool does, for the reply to name. Each answered call covers
    one planned call of its tool, so a call already answered is never asked for again.
    """
    opened: list[OpenAsk] = []

    def plan_more(run: Run) -> Result:
        selection = strategy.select(run)
        opened.extend(open_asks(selection.asks, selection.plan))
        missing = with_waited(still_missing(selection, list(request.answered)), request)
        if not missing.tools:
            return run.result("", [])
        return strategy.act(run, missing)

    result = attempt(start(request.turns, toolbox, "nothing"), plan_more)
    new = [call for call in result.calls if call.outcome.ok and not request.answers(call)]
    return result.model_copy(update={"calls": new, "open_asks": []}), opened


def with_waited(missing: Selection, request: Request) -> Selection:
    """``missing`` and the calls that waited for these results, which it may leave out.

    Planned again with the results in view, Qwen 0.5B planned only the conversion it had
    already made, and the todo that waited for its amount was never made.
    """
    known = request.toolbox.names if request.toolbox is not None else []
    waited = [t for t in request.waited if t in known and t not in missing.tools]
    if not waited:
        return missing
    return Selection([*missing.tools, *waited], [], asks=missing.asks)


def _reply_from_results(
    strategy: Planner,
    request: Request,
    start: RunStarter,
    opened: Sequence[OpenAsk] = (),
) -> Result:
    """The summary role's report of the results the caller sent back.

    ``opened``: what the request asked that no tool does; the reply names it as not done.
    """
    run = start(request.conversation, request.toolbox or NO_TOOLS, "reply")
    run.ledger.leave_open(opened)
    run.ledger.add_made_elsewhere(list(request.answered))
    summary = strategy.replies().summary
    tools = [call.tool for call in request.answered]
    result = attempt(run, lambda run: summarise(run, summary, tools))
    # The calls were the caller's to make, and are made: nothing is left to call.
    return result.model_copy(update={"calls": []})


def _chat_reply(strategy: Planner, request: Request, start: RunStarter) -> Result:
    """The chat role's reply, with no tool offered.

    No tool was planned, so the reply is not checked for results nobody looked up: with no
    tools a number in it is the model's own knowledge (or a structured answer's field).
    """
    words = strategy.replies().chat
    run = start(request.conversation, NO_TOOLS, "reply")
    return attempt(run, lambda run: chat(run, words, [CONVERSATION]))


def _forced_calls(
    strategy: Planner,
    request: Request,
    start: RunStarter,
    toolbox: Toolbox,
    tools: list[str] | None,
) -> Result:
    """Make the calls of ``tools``, or of the tools the strategy plans with a tool required.

    The strategy's own ``select`` and ``act`` plan and make the calls, under its own policies
    (a plan that must name a tool: ``select(require_tool=True)``). A plan with no tool falls
    back to the only tool of a toolbox of one; otherwise no call is made, and the caller
    reports that ``tool_choice`` could not be honoured.
    """

    def make_calls(run: Run) -> Result:
        names = tools if tools is not None else strategy.select(run, require_tool=True).tools
        if not names:
            names = toolbox.names if len(toolbox) == 1 else []
        names = [name for name in names if name != CONVERSATION]
        if not names:
            return run.result("", names)
        return strategy.act(run, Selection(names, []))

    return attempt(start(request.turns, toolbox, "nothing"), make_calls)


# ------------------------------------------------------------------ strategies that run whole


def answer_whole(strategy: Runner, request: Request, start: RunStarter) -> Result:
    """Answer ``request`` by running ``strategy`` whole over the tools the request allows."""
    if request.toolbox is None or request.tool_choice == "none":
        return attempt(start(request.turns, NO_TOOLS, "reply"), strategy.run)
    toolbox = request.toolbox
    if request.tool_choice == "named" and request.function is not None:
        toolbox = toolbox.subset(names=[request.function])
    result = attempt(start(request.turns, toolbox, "calls"), strategy.run)
    new = [call for call in result.calls if not request.answers(call)]
    if request.answered and not any(call.outcome.ok for call in new):
        if result.reply:  # it answered in words, with the results in view
            return result.model_copy(update={"calls": []})
        # It only called again what was answered: the reply reports what the results say.
        return combined(result, attempt(start(request.turns, NO_TOOLS, "reply"), strategy.run))
    return deferred(result.model_copy(update={"calls": new}), request)


# ------------------------------------------------------------------ shared


def combined(first: Result, second: Result) -> Result:
    """``second``, with the usage of both runs (a retried request pays for both)."""
    usage = dict(first.usage)
    for role, spent in second.usage.items():
        usage[role] = usage[role] + spent if role in usage else spent
    return second.model_copy(update={"usage": usage})


def _any_made(result: Result) -> bool:
    return any(call.outcome.ok for call in result.calls)


def _nothing_to_send(result: Result) -> bool:
    """Whether a run ended with no call made and no reply, for a reason other than the model."""
    failed = result.failure is not None and not result.failure.model_failed
    return failed and not result.reply and not _any_made(result)
