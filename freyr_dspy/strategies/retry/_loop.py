"""From planned tools to calls, under a ``CallPolicy`` (FREYR's inner loop).

The parameters role writes a call's arguments, the tool runs, and a failed call is retried
with its error as feedback. Every strategy that calls tools (``freyr``, ``nlt``, ``gated``)
goes through ``call_until_exhausted``, so the policy's switches work for each of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.prompting import NO_FEEDBACK, says_nothing
from freyr_dspy.roles import (
    Role,
    give_up_feedback,
    gives_up,
    one_call_note,
    parameters_contract,
    several_calls_contract,
    several_calls_note,
)
from freyr_dspy.schemas import CallRecord, Outcome
from freyr_dspy.strategies._executor import ToolExecutor
from freyr_dspy.strategies._grounding import differs_by_stated_values, lists_values
from freyr_dspy.strategies._lookups import lookup_policy, lookups_for, resolved_ids
from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._references import gave_result
from freyr_dspy.strategies._run import Run, call_text
from freyr_dspy.strategies.retry._blame import (
    RetryLimits,
    blame_note,
    blamed_arguments,
    listed_correction,
)
from freyr_dspy.tools import Tool, render_tool_spec

__all__ = ["call_until_exhausted", "look_up", "returned_results", "with_results"]

#: Most calls of one tool the parameters role may write at once with ``split_calls``.
SPLIT_MOST = 4


def splits(policy: CallPolicy, message: str) -> bool:
    """Whether every planned tool may be written as several calls for ``message``."""
    return policy.split_calls or (policy.split_listed and lists_values(message))


def call_until_exhausted(
    run: Run,
    parameters: Role,
    tool_names: list[str],
    policy: CallPolicy,
    spare: Mapping[str, int] | None = None,
    words: Mapping[str, list[str]] | None = None,
) -> list[str]:
    """Call each tool in order with retries; stop at the first that exhausts them.

    FREYR stops there (LLMaker spec 4.2): later calls usually build on the failed one, and
    a small model that planned a dozen wrong names would otherwise spend its retries on
    every one of them. A call the model gave up on does not stop the rest.

    A tool planned several times ("the weather in Oslo and in Paris") has all its calls
    written at once, where its first entry stands (``fill_several``): asked for each
    entry alone, Qwen 1.5B wrote the same arguments every time. With ``split_calls``
    every planned tool is filled that way, for models that name a tool once whatever
    the message asks of it (with ``split_listed``, when the message may list values);
    ``spare[name]`` more calls of a tool may be written too (the plan's dropped entries,
    ``freyr+refill``). Calls beyond those planned are kept only
    when they differ in values the request states. ``words[name]``: the words of each ask of
    the tool (``freyr+asks``), shown so that each call takes its own ask's values.
    Returns the names never attempted.
    """
    planned = Counter(tool_names)
    spare = spare or {}
    words = words or {}
    split = SPLIT_MOST if splits(policy, run.message) else 1
    order = list(dict.fromkeys(tool_names))
    for index, name in enumerate(order):
        most = max(planned[name] + spare.get(name, 0), split)
        asked = words.get(name, ())
        several = (
            fill_several(run, parameters, name, most, asked=planned[name], words=asked)
            if most > 1
            else [None]
        )
        focus = asked[0] if most == 1 and len(asked) == 1 else None
        for first in several:
            record = call_with_retries(run, parameters, name, policy, first=first, words=focus)
            # a call that waits for a later round is not a failure: the calls after it go on
            if record.exhausted and name not in run.waiting:
                return [n for n in tool_names if n in order[index + 1 :]]
    return []


def look_up(run: Run, parameters: Role, policy: CallPolicy, reads: Sequence[Tool]) -> list[str]:
    """Call ``reads``, the read-only tools ``lookups_for`` picked; their names.

    Each is called once (``lookup_policy``) and never looks anything up itself. A read that
    needs no value is called with none (its filters left at their defaults: everything is
    listed), which costs no model call; one that needs values has them written like any
    call's.
    """
    for read in reads:
        # A read that needs no value is called with none: asked to fill its optional filter,
        # Qwen 1.5B wrote the action's words ("urgent" for the tag) and listed nothing.
        first: dict[str, Any] | None = None if any(p.required for p in read.parameters) else {}
        call_with_retries(run, parameters, read.name, lookup_policy(policy), first=first,
                          looks_up=False)  # fmt: skip
    return [read.name for read in reads]


def parameters_inputs(run: Run, tool_text: str, feedback: str = NO_FEEDBACK) -> dict[str, str]:
    """The parameters role's inputs in ``run``, shown the tool as ``tool_text``.

    The results of the calls already run in this request follow the earlier turns, so a call
    whose value comes from a result ("find my city, then its weather") can take it.
    """
    return {
        "conversation": with_results(run.conversation, run.calls),
        "message": run.message,
        "state": run.state_text(),
        "tool": tool_text,
        "feedback": feedback,
    }


def with_results(conversation: str, calls: Sequence[CallRecord]) -> str:
    """``conversation`` with a ``tool`` turn for each call that ran and returned a result.

    Recorded calls (spec-only tools) returned nothing, and failed calls nothing to take a
    value from: neither is shown, so most prompts stay exactly as they were.
    """
    ran = [c for c in calls if gave_result(c)]
    if not ran:
        return conversation
    turns = "\n".join(f"tool: {call_text(c)} returned {c.outcome.message}" for c in ran)
    earlier = "" if says_nothing("conversation", conversation) else conversation.rstrip() + "\n"
    return earlier + turns


def returned_results(calls: Sequence[CallRecord]) -> bool:
    """Whether some call ran and returned a result (not an error, not only recorded)."""
    return any(gave_result(call) for call in calls)


def warm_parameters(run: Run, parameters: Role, tool: Tool) -> None:
    """Ask the parameters role about ``tool`` as a first attempt would (see ``Run.warming``).

    The prompt up to the message - instructions, then the tool's spec - is the same for every
    first attempt at ``tool``; a prefix cache keeps it from then on.
    """
    if tool.parameters:
        inputs = parameters_inputs(run, render_tool_spec(tool))
        run.call(parameters, contract=parameters_contract(tool), **inputs)


def fill_several(
    run: Run,
    parameters: Role,
    tool_name: str,
    most: int,
    *,
    asked: int | None = None,
    words: Sequence[str] = (),
) -> list[dict[str, Any] | None]:
    """The arguments of each call of ``tool_name`` the message asks for (at most ``most``).

    One parameters call writes ``{"calls": [...]}``, an object per call, so every call
    is written knowing the others (``several_calls_contract``). Calls written twice count
    once. A backend that does not hold the model to the contract may answer with one
    call's arguments: that call is made once, and an answer with no call leaves the
    first call to be asked for alone (``[None]``).

    ``asked``: how many calls the plan named (default ``most``). Calls beyond it are the
    model's own split (``split_calls``), kept only when each differs from the calls before
    it in values the request states (``differs_by_stated_values``). ``words``: the words of
    each ask of the tool, listed in the note so that each call is written from its own.
    """
    tool = run.toolbox.get(tool_name)
    if not tool.parameters:
        return [{}] * most
    spec = f"{render_tool_spec(tool)}\n\n{several_calls_note(tool.name, most, words)}"
    inputs = parameters_inputs(run, spec)
    prediction = run.call(parameters, contract=several_calls_contract(tool, most), **inputs)
    written = prediction.arguments
    calls = written.get("calls") if set(written) == {"calls"} else [written]
    planned = most if asked is None else asked
    evidence = run.evidence()
    kept: list[dict[str, Any]] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict) or not call or call in kept:
            continue
        if len(kept) >= planned and not differs_by_stated_values(call, kept, evidence):
            continue
        kept.append(call)
    return list(kept[:most]) or [None]


def call_with_retries(
    run: Run,
    parameters: Role,
    tool_name: str,
    policy: CallPolicy,
    *,
    first: dict[str, Any] | None = None,
    words: str | None = None,
    looks_up: bool = True,
) -> CallRecord:
    """FREYR's inner loop: parameters -> execute -> on error, feed it back and retry.

    The parameters role sees only this tool's spec, and its answer is typed by the tool's
    schema (``parameters_contract``). It gets ``1 + policy.max_retries`` attempts, plus one
    for each value refused as a copy of the description's example (``ToolExecutor.refusal``),
    after which the spec it sees has no examples left. After a failure it may give up
    instead (FREYR's ``OpError``): an operation that no arguments can make valid then costs
    no more attempts, and later calls still run.

    ``first``: the arguments of the first attempt, already written (one of several calls
    of the tool filled together, ``fill_several``); the role is asked only to retry.
    ``words``: the words of the ask this call answers, when the request asks several things
    (``one_call_note``): a tool shown the whole request took another ask's values.
    ``looks_up``: the call may wait for read-only tools, or call them after it failed
    (``look_up``); a lookup itself does neither.
    """
    tools = run.tools(policy)
    attempts = _Attempts.of(run.toolbox.get(tool_name), policy, tools)
    attempts.note = one_call_note(words) if words else ""
    may_look_up = looks_up and bool(lookups_for(run, [tool_name]))
    may_wait = looks_up and run.can_wait and (returned_results(run.calls) or may_look_up)
    while attempts.left > 0:
        attempts.left -= 1
        if not attempts.write(run, parameters, first):
            break
        attempts.arguments = resolved_ids(attempts.tool, attempts.arguments, run.calls)
        if may_wait and tools.unstated(tool_name, attempts.arguments):
            # A value stated nowhere, results so far included, would be made up where it
            # should come from a result the plan has not asked for yet, or from a read-only
            # tool that may hold it (``lookups_for``): while a round is left
            # (``Run.can_wait``) the call waits for it (``Freyr.more_rounds``), written again
            # with the results shown; in the last round it is made as written.
            run.ledger.wait(tool_name)
            return attempts.record()
        if attempts.try_call(policy):
            break
        if attempts.ran and may_look_up:
            # "no note running-plan": the tool ran and refused a value that a read-only tool
            # may hold (an id for a title); the retry sees what the reads return.
            look_up(run, parameters, policy, lookups_for(run, [tool_name]))
            may_look_up = False
        # "no door patio door; doors: front, patio": the retry takes the listed value meant
        first = (
            listed_correction(attempts.arguments, attempts.outcome.message)
            if attempts.ran
            else None
        )
    record = attempts.record()
    run.ledger.add_call(record)
    return record


@dataclass
class _Attempts:
    """The attempts at one call: what the model wrote, what came back, what it may write next."""

    tool: Tool
    #: The tool as the parameters role sees it (without examples after one was copied).
    shown: Tool
    limits: RetryLimits
    #: The tool's parameter schemas, ``$ref``s inlined: what a blamed value is checked against.
    properties: dict[str, Any]
    left: int
    #: Checks the arguments and runs the tool.
    tools: ToolExecutor
    arguments: dict[str, Any] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    outcome: Outcome = field(default_factory=lambda: Outcome(ok=False, message="not attempted"))
    feedback: str = NO_FEEDBACK
    gave_up: bool = False
    #: The tool has run at least once (a copied example refused is not a run).
    ran: bool = False
    #: What follows the tool's spec (the words of the ask this call answers), or nothing.
    note: str = ""

    def spec_text(self) -> str:
        """The tool as the parameters role is shown it: its spec, then the note."""
        spec = render_tool_spec(self.shown)
        return f"{spec}\n\n{self.note}" if self.note else spec

    @classmethod
    def of(cls, tool: Tool, policy: CallPolicy, tools: ToolExecutor) -> _Attempts:
        limits = RetryLimits(policy.exclude_blamed, policy.choose_listed)
        properties = parameters_contract(tool)["arguments"].get("properties", {})
        attempts = 1 + policy.max_retries
        return cls(tool, tool, limits, properties, left=attempts, tools=tools)

    def write(self, run: Run, parameters: Role, first: dict[str, Any] | None) -> bool:
        """Take the next arguments: ``first``, else the parameters role's; False if it gave up."""
        if first is not None:
            self.arguments, self.dropped = self.tools.grounded(self.tool.name, first)
            return True
        if not self.tool.parameters:
            return True
        prediction = run.call(
            parameters,
            contract=parameters_contract(
                self.shown,
                may_give_up=bool(self.errors),
                forbidden=self.limits.forbidden,
                choices=self.limits.choices,
            ),
            **parameters_inputs(run, self.spec_text(), self.feedback),
        )
        names = {p.name for p in self.tool.parameters}
        reason = gives_up(prediction.arguments, names) if self.errors else None
        if reason is not None:
            message = f"not possible: {reason} (last error: {self.errors[-1]})"
            self.outcome, self.gave_up = Outcome(ok=False, message=message), True
            return False
        self.arguments, self.dropped = self.tools.grounded(self.tool.name, prediction.arguments)
        return True

    def try_call(self, policy: CallPolicy) -> bool:
        """Check the arguments, run the tool, learn from a failure; True when no retry follows.

        Required values nobody stated (``require_stated``) are checked until the tool has run
        once, after a copy of a description's example is refused: the model first writes the
        user's value.
        """
        tools, name = self.tools, self.tool.name
        echoed = tools.echoed(self.arguments, self.errors[-1] if self.errors else "")
        if echoed:  # the feedback written back as a value: no call is better than that one
            message = f"not made: {', '.join(echoed)} repeats the last error, not the user's value"
            self.outcome, self.gave_up = Outcome(ok=False, message=message), True
            return True
        refusal = tools.refusal(name, self.arguments)
        # After a tool error the model may rightly write a value the error listed.
        checked = policy.require_stated and refusal is None and not self.ran
        missing = tools.unstated(name, self.arguments) if checked else []
        if missing:
            message = f"not made: the request gives no {', '.join(missing)}"
            self.outcome, self.gave_up = Outcome(ok=False, message=message), True
            return True
        if refusal is not None:  # asking again for the user's value costs no retry
            self.left += 1
            self.outcome = Outcome(ok=False, message=refusal)
            self.shown = tools.shown_after_refusal(self.tool)
        else:
            self.outcome, self.ran = tools.run(name, self.arguments), True
        if self.outcome.ok:
            return True
        self.learn(policy, refused=refusal is not None)
        return False

    def learn(self, policy: CallPolicy, *, refused: bool) -> None:
        """Narrow the next attempts by the error, and write the feedback they see."""
        error = self.outcome.message
        self.errors.append(error)
        watching = policy.reads_blame and not refused
        blamed = blamed_arguments(self.arguments, error) if watching else {}
        self.limits.record(error, blamed, self.properties)
        kept = {name: value for name, value in self.arguments.items() if name not in blamed}
        note = blame_note(blamed, self.limits.choices)
        self.feedback = give_up_feedback(self.tool.name, None if refused else kept, error, note)

    def record(self) -> CallRecord:
        return CallRecord(
            tool=self.tool.name,
            arguments=self.arguments,
            outcome=self.outcome,
            attempts=len(self.errors) + (1 if self.outcome.ok else 0),
            errors=self.errors,
            gave_up=self.gave_up,
            never_made=self.gave_up and not self.ran,
            dropped=self.dropped,
        )
