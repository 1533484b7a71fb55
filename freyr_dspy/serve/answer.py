"""Run the program for one request: calls for the client to execute, or a reply in words.

* A first turn runs the whole program with ``calls_only``: it stops once the calls are made
  (they are spec-only, recorded rather than executed), or replies when no tool is needed;
  when every call it tried failed (arguments the schema refuses, every attempt), the chat
  role replies instead.
* A turn ending with tool results has the summary role report them (FREYR's LLM_summary).
* ``tool_choice: none`` (or a request without tools) has the chat role reply.
* ``tool_choice`` naming a function calls it without asking the intent role; ``required``
  runs the program and, when it made no call, asks the intent role once more with the
  ``conversation`` answer taken away (``recognise_intents(require_tool=True)``).

The last three start the request's ``Run`` with ``FreyrProgram.start_run`` and run one of the
strategy's steps in it with ``FreyrProgram.run_step`` (``steps.summarise``, ``steps.chat``, the
selecting strategies' ``act``), as ``forward`` runs the whole strategy.
"""

from __future__ import annotations

from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting.parsing import CONVERSATION
from freyr_dspy.schemas import CallRecord, Outcome, Result
from freyr_dspy.serve.conversation import Turn
from freyr_dspy.serve.translate import ToolPlan
from freyr_dspy.strategies import Run, StrategyModule
from freyr_dspy.strategies.freyr import recognise_intents
from freyr_dspy.strategies.gated import Gated, SelectingStrategy
from freyr_dspy.strategies.steps import Selection, chat, summarise
from freyr_dspy.tools import Toolbox

__all__ = ["NEEDED_ROLES", "answer"]

#: Roles a served program must have: the chat role replies in words, the summary role
#: reports tool results.
NEEDED_ROLES = ("chat", "summary")


def answer(program: FreyrProgram, turn: Turn, toolbox: Toolbox | None, plan: ToolPlan) -> Result:
    """Run ``program`` for one request as ``plan`` asks (see the module docstring)."""
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
    return result


def nothing_to_send(result: Result) -> bool:
    """Whether a run ended with no call made and no reply, for a reason other than the model."""
    failed = result.failure is not None and not result.failure.model_failed
    return failed and not result.reply and not any(call.outcome.ok for call in result.calls)


def reply_from_results(program: FreyrProgram, turn: Turn, toolbox: Toolbox | None) -> Result:
    """The summary role's report of the tool results the client sent back."""
    run = _run(program, turn, toolbox or Toolbox([]))
    run.calls = [
        CallRecord(tool=r.name, arguments=r.arguments, outcome=Outcome(ok=True, message=r.content))
        for r in turn.results
    ]
    result = program.run_step(run, lambda run: summarise(run, [r.name for r in turn.results]))
    # The calls were the client's to make, and are made: nothing is left to call.
    return result.model_copy(update={"calls": []})


def chat_reply(program: FreyrProgram, turn: Turn) -> Result:
    """The chat role's reply, with no tool offered."""
    run = _run(program, turn, Toolbox([]))
    return program.run_step(run, lambda run: chat(run, []))


def forced_calls(
    program: FreyrProgram, turn: Turn, toolbox: Toolbox, tools: list[str] | None
) -> Result:
    """Make the calls of ``tools``, or of the tools the intent role must name (None).

    The strategy's own ``act`` makes the calls, under its own call policy. Without an intent
    role (``nlt``), a toolbox of one tool is that tool; otherwise no call is made, and the
    caller reports that ``tool_choice`` could not be honoured.
    """
    run = _run(program, turn, toolbox, since=True, calls_only=True)
    selecting = _selecting(program.strategy)

    def make_calls(run: Run) -> Result:
        names = tools
        if names is None and "intent" in program.role_names:
            names, _ = recognise_intents(run, require_tool=True)
        elif names is None:
            names = toolbox.names if len(toolbox) == 1 else []
        names = [name for name in names if name != CONVERSATION]
        if not names or selecting is None:
            return run.result("", names)
        return selecting.act(run, Selection(names, []), respond=False)

    return program.run_step(run, make_calls)


def _selecting(strategy: StrategyModule) -> SelectingStrategy | None:
    """The part of a strategy that carries out a selection (``freyr``, ``nlt``, in ``gated``)."""
    if isinstance(strategy, Gated):
        return strategy.selecting_inner()
    return strategy if isinstance(strategy, SelectingStrategy) else None


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
    calls_only: bool = False,
) -> Run:
    """The request's run, as ``FreyrProgram.forward`` starts one.

    ``since``: the conversation includes the turns after the request (calls and results).
    """
    turns = [*turn.conversation, *turn.since] if since else list(turn.conversation)
    return program.start_run(turn.message, turns, toolbox=toolbox, calls_only=calls_only)
