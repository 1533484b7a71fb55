"""Run the program for one request: calls for the client to execute, or a reply in words.

* A first turn runs the whole program with ``calls_only``: it stops once the calls are made
  (they are spec-only, recorded rather than executed), or replies when no tool is needed;
  when every call it tried failed (arguments the schema refuses, every attempt), the chat
  role replies instead. A later call whose required values the request never states waits
  for the results of the calls before it (``deferred``): "find my city, then its weather"
  sends the lookup first, not a weather call with an invented city.
* A turn ending with the results of calls sent while others waited (their ids say so,
  ``translate.WAITING``: the server keeps no state) is planned again with the results shown
  (``next_calls``): calls it still lacks are sent as new tool calls, up to the strategy's
  ``rounds``; otherwise the summary role reports the results (FREYR's LLM_summary).
  ``required`` after results is planned again too, and never repeats a call already
  answered: it calls what is still missing (a tool not yet called), or answers in words.
* ``tool_choice: none`` (or a request without tools) has the chat role reply.
* ``tool_choice`` naming a function calls it without asking the intent role; ``required``
  runs the program and, when it made no call, asks the intent role once more with the
  ``conversation`` answer taken away (``select(require_tool=True)``).

The last three start the request's ``Run`` with ``FreyrProgram.start_run`` and run one of the
strategy's steps in it with ``FreyrProgram.run_step`` (``steps.summarise``, ``steps.chat``, the
selecting strategies' ``act``), as ``forward`` runs the whole strategy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting._parsing import CONVERSATION
from freyr_dspy.schemas import CallRecord, OpenAsk, Outcome, Result
from freyr_dspy.serve._conversation import Turn
from freyr_dspy.serve._translate import ToolPlan, is_waiting_id
from freyr_dspy.strategies import Ending, Run
from freyr_dspy.strategies._asks import open_asks
from freyr_dspy.strategies._grounding import Evidence, unstated_required
from freyr_dspy.strategies._steps import Selection, chat, still_missing, summarise
from freyr_dspy.tools import Toolbox

__all__ = ["answer"]


def answer(program: FreyrProgram, turn: Turn, toolbox: Toolbox | None, plan: ToolPlan) -> Result:
    """Run ``program`` for one request as ``plan`` asks (see the module docstring)."""
    if turn.results and toolbox is not None and plan.mode in ("auto", "required"):
        return after_results(program, turn, toolbox, plan)
    if turn.results and plan.mode in ("auto", "none"):
        return reply_from_results(program, turn, toolbox)
    if toolbox is None or plan.mode == "none":
        return chat_reply(program, turn)
    if plan.mode == "named" and plan.function is not None:
        return forced_calls(program, turn, toolbox.subset(names=[plan.function]), [plan.function])
    conversation = [*turn.conversation, *turn.since]
    prediction = program(
        message=turn.message, conversation=conversation, toolbox=toolbox, calls_only=True
    )
    result: Result = prediction.result
    if plan.mode == "required" and not any(call.outcome.ok for call in result.calls):
        return combined(result, forced_calls(program, turn, toolbox, None))
    if plan.mode == "auto" and nothing_to_send(result):
        # Every call the program tried failed: the tools do not do what was asked (a near
        # miss), so the chat role answers in words rather than the client getting a 502.
        return combined(result, chat_reply(program, turn))
    return deferred(result, turn, toolbox)


def deferred(result: Result, turn: Turn, toolbox: Toolbox) -> Result:
    """``result`` without the calls that wait for the results of the calls before them.

    A call after the first whose required text values the request does not state
    (``unstated_required``) would carry values the model made up; its values come from a
    result, so it is left for the next round, planned once the client sends the results.
    """
    evidence = Evidence.of(turn.message, *(t["content"] for t in turn.conversation))
    kept, waiting = [], []
    for index, call in enumerate(result.calls):
        tool = toolbox.resolve(call.tool)
        if index > 0 and tool is not None and unstated_required(tool, call.arguments, evidence):
            waiting.append(call.tool)
        else:
            kept.append(call)
    if not waiting:
        return result
    return result.model_copy(update={"calls": kept, "waiting": [*result.waiting, *waiting]})


def after_results(program: FreyrProgram, turn: Turn, toolbox: Toolbox, plan: ToolPlan) -> Result:
    """The next calls, when the results leave some to make; else the reply (see above)."""
    open_asks: list[OpenAsk] = []
    replan = plan.mode == "required" or any(is_waiting_id(r.call_id) for r in turn.results)
    if replan and tool_rounds(turn) < program.strategy.rounds:
        more, open_asks = next_calls(program, turn, toolbox)
        if more.calls:
            return more
    left = toolbox.subset(names=[n for n in toolbox.names if n not in answered_tools(turn)])
    if plan.mode == "required" and len(left) > 0:
        forced = forced_calls(program, turn, left, None)
        if any(call.outcome.ok for call in forced.calls):
            return forced
    return reply_from_results(program, turn, toolbox, open_asks)


def next_calls(program: FreyrProgram, turn: Turn, toolbox: Toolbox) -> tuple[Result, list[OpenAsk]]:
    """The calls a plan with the results shown still lacks, and its open asks.

    The open asks are what no tool does, for the reply to name. Each answered call covers
    one planned call of its tool, so a call already answered is never asked for again.
    """
    strategy = program.strategy
    if not strategy.selects:
        return Result(reply="", strategy=program.strategy_name), []
    answered = answered_calls(turn)

    def plan_more(run: Run) -> Result:
        selection = strategy.select(run)
        opened.extend(open_asks(selection.asks, selection.plan))
        missing = still_missing(selection, answered)
        if not missing.tools:
            return run.result("", [])
        return strategy.act(run, missing)

    opened: list[OpenAsk] = []
    run = _run(program, turn, toolbox, since=True, ending="nothing")
    result = program.run_step(run, plan_more)
    done = {(c.tool, json.dumps(c.arguments, sort_keys=True)) for c in answered}
    new = [
        call
        for call in result.calls
        if call.outcome.ok and (call.tool, json.dumps(call.arguments, sort_keys=True)) not in done
    ]
    return result.model_copy(update={"calls": new, "open_asks": []}), opened


def tool_rounds(turn: Turn) -> int:
    """Rounds of tool calls since the request: the assistant messages that made calls."""
    return turn.rounds


def answered_calls(turn: Turn) -> list[CallRecord]:
    """The calls the client made and answered since the request, as the ledger records calls."""
    return [
        CallRecord(tool=r.name, arguments=r.arguments, outcome=Outcome(ok=True, message=r.content))
        for r in turn.results
    ]


def answered_tools(turn: Turn) -> set[str]:
    """The tools whose calls the client has answered since the request."""
    return {result.name for result in turn.results}


def nothing_to_send(result: Result) -> bool:
    """Whether a run ended with no call made and no reply, for a reason other than the model."""
    failed = result.failure is not None and not result.failure.model_failed
    return failed and not result.reply and not any(call.outcome.ok for call in result.calls)


def reply_from_results(
    program: FreyrProgram,
    turn: Turn,
    toolbox: Toolbox | None,
    open_asks: Sequence[OpenAsk] = (),
) -> Result:
    """The summary role's report of the tool results the client sent back.

    ``open_asks``: what the request asked that no tool does; the reply names it as not done.
    """
    run = _run(program, turn, toolbox or Toolbox([]))
    run.ledger.leave_open(open_asks)
    run.ledger.add_made_elsewhere(answered_calls(turn))
    summary = program.strategy.replies().summary
    result = program.run_step(
        run, lambda run: summarise(run, summary, [r.name for r in turn.results])
    )
    # The calls were the client's to make, and are made: nothing is left to call.
    return result.model_copy(update={"calls": []})


def chat_reply(program: FreyrProgram, turn: Turn) -> Result:
    """The chat role's reply, with no tool offered.

    No tool was planned, so the reply is not checked for results nobody looked up: with no
    tools a number in it is the model's own knowledge (or a structured answer's field).
    """
    run = _run(program, turn, Toolbox([]))
    words = program.strategy.replies().chat
    return program.run_step(run, lambda run: chat(run, words, [CONVERSATION]))


def forced_calls(
    program: FreyrProgram, turn: Turn, toolbox: Toolbox, tools: list[str] | None
) -> Result:
    """Make the calls of ``tools``, or of the tools the strategy plans with a tool required.

    The strategy's own ``select`` and ``act`` plan and make the calls, under its own
    policies (a plan that must name a tool: ``select(require_tool=True)``). A plan with no
    tool falls back to the only tool of a toolbox of one; otherwise no call is made, and the
    caller reports that ``tool_choice`` could not be honoured.
    """
    run = _run(program, turn, toolbox, since=True, ending="nothing")
    strategy = program.strategy

    def make_calls(run: Run) -> Result:
        names = tools
        if names is None and strategy.selects:
            names = strategy.select(run, require_tool=True).tools
        if not names:
            names = toolbox.names if len(toolbox) == 1 else []
        names = [name for name in names if name != CONVERSATION]
        if not names or not strategy.selects:
            return run.result("", names)
        return strategy.act(run, Selection(names, []))

    return program.run_step(run, make_calls)


def combined(first: Result, second: Result) -> Result:
    """``second``, with the usage of both runs (a retried request pays for both)."""
    usage = dict(first.usage)
    for role, spent in second.usage.items():
        usage[role] = usage[role] + spent if role in usage else spent
    return second.model_copy(update={"usage": usage})


def _run(
    program: FreyrProgram,
    turn: Turn,
    toolbox: Toolbox,
    *,
    since: bool = False,
    ending: Ending = "reply",
) -> Run:
    """The request's run, as ``FreyrProgram.forward`` starts one.

    ``since``: the conversation includes the turns after the request (calls and results).
    """
    turns = [*turn.conversation, *turn.since] if since else list(turn.conversation)
    return program.start_run(turn.message, turns, toolbox=toolbox, ending=ending)
