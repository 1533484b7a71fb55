"""Strategy ``freyr``: the FREYR paper's Algorithm 1.

intents -> (a plan naming several tools is confirmed tool by tool) -> if only
``conversation``: chat; else for each intent: parameters -> execute -> on error feed the error
back and retry (``max_retries``) -> summary of all outcomes. With ``replan``, a plan whose first
call fails after every retry is planned once more without that tool, the failure shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar

from freyr_dspy.prompting import CONVERSATION, Contract, match_names, says_nothing
from freyr_dspy.roles import Role, confirm_contract, confirmed, intent_contract
from freyr_dspy.schemas import Result
from freyr_dspy.strategies._asks import Ask, open_asks, plan_of, recognise_asks
from freyr_dspy.strategies._base import PlanningStrategy
from freyr_dspy.strategies._calibration import calibrated_first_tool
from freyr_dspy.strategies._lookups import lookups_for
from freyr_dspy.strategies._policies import CallPolicy, PlanningPolicy, Policy, changed_settings
from freyr_dspy.strategies._run import Run
from freyr_dspy.strategies._scored_confirm import confirm_inputs, scored_verdicts
from freyr_dspy.strategies._steps import (
    Replies,
    Selection,
    after_calls,
    still_missing,
    unknown_tools_failure,
    without_tools,
)
from freyr_dspy.strategies.retry import (
    call_until_exhausted,
    look_up,
    returned_results,
    warm_parameters,
    with_results,
)
from freyr_dspy.tools import Toolbox

__all__ = [
    "MAX_INTENTS",
    "Freyr",
    "confirm_intents",
    "copies_catalog",
    "freed_slots",
    "recognise_intents",
    "replan_note",
]

CONVERSATION_TOOL = {CONVERSATION: "reply without any tool: chat, clarify, or suggest"}

#: Most tool calls one request may plan: a tiny model that loops on a name must not run away.
MAX_INTENTS = 8


def recognise_intents(
    run: Run,
    role: Role,
    *,
    calibrate: bool = False,
    conversation: str | None = None,
    require_tool: bool = False,
) -> tuple[list[str], list[str]]:
    """Ask the intent role; return (known intents in order, names it wrote that are unknown).

    A repeated name is kept (the signature asks for one entry per call), up to ``MAX_INTENTS``;
    the answer is typed by the catalog (``intent_contract``). With ``calibrate`` the first tool
    is re-chosen by calibrated likelihood where the model can score (``calibrated_first_tool``).
    ``conversation`` replaces the run's earlier turns in the prompt (a re-plan adds its note).
    ``require_tool`` offers no ``conversation`` answer, in the catalog or the contract.
    """
    shown = run.conversation if conversation is None else conversation
    intents, unknown, asked = _ask_intents(run, role, MAX_INTENTS, shown, require_tool)
    if copies_catalog(intents, run.toolbox.names):
        # A list of most of the catalog, in catalog order, is a copy, not a choice: Qwen
        # 0.5B wrote one for 17 of our suite's 74 requests (the 1.5B for none). Asked again
        # for one tool only, it got 5 of those 17 right, where the copies got none.
        intents, unknown, asked = _ask_intents(run, role, 1, shown, require_tool)
    if calibrate:
        intents = calibrated_first_tool(run, role, intents, *asked)
    run.ledger.plan(intents[:MAX_INTENTS])
    return run.intents, unknown


def _ask_intents(
    run: Run, role: Role, max_items: int, conversation: str, require_tool: bool = False
) -> tuple[list[str], list[str], tuple[dict[str, Any], Contract]]:
    """Ask the intent role: (known intents, unknown names, the inputs and contract asked with)."""
    contract = intent_contract(run.toolbox.names, max_items, conversation=not require_tool)
    inputs = {
        "conversation": conversation,
        "message": run.message,
        "tools": run.toolbox.catalog(
            run.catalog_level, extra=None if require_tool else CONVERSATION_TOOL
        ),
        "state": run.state_text(),
    }
    prediction = run.call(role, contract=contract, **inputs)
    intents, unknown = match_names(prediction.intents, run.toolbox.names, keep_repeats=True)
    return intents, unknown, (inputs, contract)


def copies_catalog(intents: list[str], catalog: list[str]) -> bool:
    """Whether a plan just lists the catalog: 3+ distinct tools, half of it or more, in order."""
    tools = list(dict.fromkeys(name for name in intents if name in catalog))
    positions = [catalog.index(name) for name in tools]
    in_catalog_order = positions == sorted(positions)
    return len(tools) >= 3 and 2 * len(tools) >= len(catalog) and in_catalog_order


def confirm_intents(
    run: Run,
    role: Role | None,
    intents: list[str],
    *,
    abstain: bool = False,
    scored: bool = False,
    abstain_margin: float | None = None,
    confirm_margin: float | None = None,
    alone: bool = False,
) -> list[str]:
    """Keep the planned tools the ``confirm`` role judges the message to ask for.

    Asked when the plan names two different tools or more, and with ``abstain`` for a plan
    of one tool too: a plan it rejects entirely is answered in words. Without ``abstain`` a
    single tool (or one tool repeated) is the intent role's whole answer. A strategy that
    holds no ``confirm`` role (``role`` None) keeps the plan as it is. With ``scored`` the
    verdicts are read from the model's likelihoods where it can score (``scored_confirm``),
    else written as usual;
    ``abstain_margin`` is the margin a plan of one tool is scored with, if not the usual
    (``freyr+abstain_margin=...``), ``confirm_margin`` the margin of a plan of several;
    ``alone`` checks the message without the conversation's earlier turns.

    Read-only tools (``Tool.read_only``) are kept unchecked: the check guards against an
    action nobody asked for, and a read changes nothing. Fitted on requests that stand alone,
    the 1.5B's margin turned down "Show me my notes tagged work" in a conversation.
    """
    planned = list(dict.fromkeys(name for name in intents if name != CONVERSATION))
    tools = [name for name in planned if not _reads_only(run, name)]
    fewest = 1 if abstain else 2
    if len(tools) < fewest or role is None:
        return intents
    # a read planned beside an action makes a plan of several asks, checked as one
    margin = abstain_margin if len(planned) == 1 else confirm_margin
    verdicts = scored_verdicts(run, role, tools, margin=margin, alone=alone) if scored else None
    if verdicts is None:
        inputs = confirm_inputs(run, tools, alone=alone)
        prediction = run.call(role, contract=confirm_contract(tools), **inputs)
        verdicts = prediction.asked
    return run.ledger.plan(confirmed(intents, {name: verdicts.get(name, True) for name in tools}))


def _reads_only(run: Run, name: str) -> bool:
    tool = run.toolbox.resolve(name)
    return tool is not None and tool.read_only


def freed_slots(plan: Sequence[str], kept: Sequence[str]) -> Counter[str]:
    """Give each planned entry the check dropped to the kept tool planned nearest before it.

    Asked for two things of one tool ("reply 'Approved' to msg-1001 and 'Rejected' to
    msg-1002"), Qwen 1.5B often plans the tool once and fills the second entry with a related
    tool (``reply_email, search_inbox``) that ``confirm`` then drops: the entry counted a thing
    asked, only its tool was wrong. Each dropped entry becomes a spare call of the kept tool
    before it (after it, when none is before), which ``fill_several`` keeps only if it differs
    from the other calls in values the request states. A plan dropped whole frees nothing.
    """
    tools = set(kept) - {CONVERSATION}
    spare: Counter[str] = Counter()
    if not tools:
        return spare
    for index, name in enumerate(plan):
        if name in tools or name == CONVERSATION:
            continue
        before = [n for n in reversed(plan[:index]) if n in tools]
        after = [n for n in plan[index + 1 :] if n in tools]
        spare[(before or after)[0]] += 1
    return spare


def replanned(
    run: Run,
    intents: list[str],
    skipped: list[str],
    strategy: Freyr,
) -> Result:
    """Plan once more after the plan's first call failed every attempt, and carry it out.

    A small model's wrong first tool (a corridor for "a new room joined to the hall") fails
    whatever arguments it writes, and its retries only rewrite the arguments. Nothing has
    changed yet, so the planning role is asked again with the failed call and its last error
    added to the conversation (``replan_note``), and with the failed tool left out of the
    catalog: shown the note alone, Qwen 1.5B planned the same tool again every time. The
    first plan asked for a tool, so the second must name one: offered ``conversation`` too,
    the 1.5B named no tool on 9 of the 12 LLMaker steps it re-planned, and nothing was tried. The
    new plan is carried out in its place; where the model still names no tool (a backend
    that cannot hold it to the contract), the first plan's failure is the result's. The
    summary sees every call made.
    """
    failed = run.calls[0]
    replies = strategy.replies()
    if len(run.toolbox.names) < 2:
        return after_calls(run, replies, intents, skipped=skipped)
    conversation = replan_note(run.conversation, failed.tool, failed.outcome.message)
    narrowed = replace(run, toolbox=catalog_without(run.toolbox, failed.tool))
    selection = strategy.select(narrowed, conversation=conversation, require_tool=True)
    new_tools = selection.tools
    if not new_tools:
        return after_calls(run, replies, intents, skipped=skipped)
    first_call = len(run.calls)
    run.ledger.plan(selection.plan)
    run.ledger.allow_waiting(False)  # the re-plan is the request's last plan: nothing waits
    new_skipped = call_until_exhausted(
        run, strategy.parameters, new_tools, strategy.calling, selection.spare, selection.words()
    )
    return after_calls(run, replies, selection.plan, skipped=new_skipped, first_call=first_call)


def catalog_without(toolbox: Toolbox, tool: str) -> Toolbox:
    """Every tool of ``toolbox`` but ``tool``: the catalog a re-plan is offered."""
    return toolbox.subset(names=[name for name in toolbox.names if name != tool])


def replan_note(conversation: str, tool: str, error: str) -> str:
    """The conversation with a turn saying which tool was tried and how it failed."""
    note = (
        f"assistant: I tried {tool}, and every attempt failed (last: {error}). "
        f"{tool} may be the wrong tool for this request."
    )
    earlier = "" if says_nothing("conversation", conversation) else conversation.rstrip() + "\n"
    return earlier + note


class Freyr(PlanningStrategy):
    """FREYR's Algorithm 1 (see the module docstring).

    Args:
        planning: how the plan is made and checked (``PlanningPolicy``; default: intents,
            a plan of several tools confirmed).
        calling: how planned tools become calls and failed calls are retried
            (``CallPolicy``).

    Settings (the policies' fields, as a label writes them: ``freyr+abstain+refill``):
        confirm: check a plan that names several tools with the ``confirm`` role before
            calling them. Without it the intent role's plan is used as written, and the
            role is not held (``gated`` runs FREYR's selection this way).
        calibrate: re-choose the plan's first tool by the model's calibrated likelihood of
            each name (``freyr_dspy.strategies._calibration``); in-process llama.cpp models only.
        replan: when the plan's first call fails after every retry, ask the intent role once
            more with that failure shown and that tool left out of the catalog, and carry out
            the new plan (``replanned``).
        exclude_blamed: a retry may not write again a value the last error blamed: the
            parameters' schema excludes it where a grammar can, the feedback asks for another
            (``freyr_dspy.strategies.retry._blame``).
        choose_listed: a retry of an argument an error blamed must take one of the values
            that error lists for its kind (``rooms: Hall, Cellar``), when it lists any
            (``freyr_dspy.strategies.retry._blame``).
        abstain: check a plan of one tool with the ``confirm`` role too, so a request no
            offered tool can carry out gets a reply in words and no call (``confirm_intents``).
            Needs ``confirm``.
        scored_confirm: read the ``confirm`` role's verdicts from the model's likelihood of
            ``true`` against ``false`` for each planned tool, keeping a tool only when ``true``
            is clearly likelier (``freyr_dspy.strategies._scored_confirm``); in-process
            llama.cpp models only, others write their verdicts as usual. Needs ``confirm``.
        refill: a planned entry whose tool ``confirm`` drops may become one more call of the
            kept tool planned before it, made only when it differs from that tool's other
            calls in values the request states (``freed_slots``). Needs ``confirm``.
        abstain_margin: how much likelier ``true`` must be than ``false`` (log space) for the
            tool of a one-tool plan to be kept, when ``abstain`` and ``scored_confirm`` are on
            (``--strategy freyr+abstain+scored_confirm+abstain_margin=2``); None: the margin of
            every scored verdict (``scored_confirm.CONFIRM_MARGIN``).
        confirm_margin: how much likelier ``true`` must be than ``false`` for a tool of a plan
            of several to be kept, when ``scored_confirm`` is on; None: ``CONFIRM_MARGIN``.
            ``freyr compile`` fits it and ``abstain_margin`` to the user's rows.
        asks: plan with the ``asks`` role instead of the intent role: each thing the
            request asks for, quoted, with its tool or none (``freyr_dspy.strategies._asks``).
            Two asks of one tool become two calls, each written from its own words; an ask no
            tool fits gets no call while the others run, and the reply names it as not done.
            Not with ``calibrate``.
        rounds: planning rounds a request may take (``more_rounds``): after calls that
            returned results, the plan is made again with the results shown, and calls it
            still lacks are made, up to this many rounds in all; 1 plans once.
        require_stated: do not make a call whose required text values share no word with
            the request (``freyr_dspy.strategies._grounding.unstated_required``); when no call
            is left, the ``chat`` role replies, and may ask for what is missing.
        split_calls: let the parameters role write several calls of any planned tool (at
            most ``SPLIT_MOST``), not only of a tool the plan names more than once; a call
            beyond those the plan names is kept only when it differs from the others in
            values the request states (``grounding.differs_by_stated_values``).
        split_listed: as ``split_calls``, only for a request that may list several values
            (a conjunction, a list, "each", "both": ``grounding.lists_values``).
        lone_tool: when the toolbox offers one action, plan it without the planning role;
            the ``abstain`` check decides whether the request asks for it (``plans_itself``).
            Needs ``abstain``.
        check_alone: the ``confirm`` role checks the plan against the message alone, without
            a conversation's earlier turns (the planning role still sees them). Needs
            ``confirm``.
    """

    intent: Role
    asks: Role
    confirm: Role
    parameters: Role
    summary: Role
    chat: Role

    name = "freyr"
    description = (
        "FREYR: intents (confirmed when several), then parameters per tool with "
        "error-feedback retries, summary"
    )

    policies: ClassVar[Mapping[str, type[Policy]]] = MappingProxyType(
        {"planning": PlanningPolicy, "calling": CallPolicy}
    )

    def __init__(
        self, planning: PlanningPolicy | None = None, calling: CallPolicy | None = None
    ) -> None:
        self.planning = planning or PlanningPolicy()
        self.calling = calling or CallPolicy()
        planner = "asks" if self.planning.asks else "intent"
        roles = (planner, "confirm", "parameters", "summary", "chat")
        confirm = self.planning.confirm
        super().__init__(roles if confirm else tuple(r for r in roles if r != "confirm"))

    def config(self) -> dict[str, Any]:
        """The settings that differ from the defaults (``confirm: False``, others ``True``)."""
        return changed_settings(self.planning, self.calling)

    @property
    def rounds(self) -> int:
        """Planning rounds a request may take (``more_rounds``)."""
        return self.planning.rounds

    @property
    def planner(self) -> Role:
        """The role that writes the plan: ``asks`` with ``asks``, else ``intent``."""
        return self.asks if self.planning.asks else self.intent

    @property
    def checker(self) -> Role | None:
        """The role that checks the plan (``confirm``), if held."""
        return self.confirm if self.planning.confirm else None

    def replies(self) -> Replies:
        """The roles that write the reply."""
        return Replies(chat=self.chat, summary=self.summary)

    def lent_models(self) -> dict[str, str]:
        """``confirm`` checks with the planner's model when it was assigned none of its own.

        Code written before the role existed assigns only the other roles; the plan is then
        checked by the model that wrote it rather than failing for want of a model.
        """
        return {"confirm": self.planner.role_id} if self.planning.confirm else {}

    def warm(self, run: Run) -> None:
        """The planning role's prompt (the catalog) and each tool's first parameters prompt."""
        if self.planning.asks:
            recognise_asks(run, self.asks)
        else:
            _ask_intents(run, self.intent, MAX_INTENTS, run.conversation)
        for tool in run.toolbox:
            warm_parameters(run, self.parameters, tool)

    def select(
        self, run: Run, *, conversation: str | None = None, require_tool: bool = False
    ) -> Selection:
        """Plan the calls (the intent or asks role), checked by the confirm role where held.

        ``conversation`` replaces the run's earlier turns in the planning prompt (a re-plan
        adds its note); ``require_tool`` makes the plan name tools only.
        """
        asks: list[Ask] = []
        unknown: list[str] = []
        if self.plans_itself(run):
            planned = run.ledger.plan(run.toolbox.names)
        elif self.planning.asks:
            asks, unknown = recognise_asks(
                run, self.asks, conversation=conversation, require_tool=require_tool
            )
            planned = plan_of(asks)
        else:
            planned, unknown = recognise_intents(
                run,
                self.intent,
                calibrate=self.planning.calibrate,
                conversation=conversation,
                require_tool=require_tool,
            )
        planning = self.planning
        intents = confirm_intents(
            run,
            self.checker,
            planned,
            abstain=planning.abstain,
            scored=planning.scored_confirm,
            abstain_margin=planning.abstain_margin,
            confirm_margin=planning.confirm_margin,
            alone=planning.check_alone,
        )
        spare = freed_slots(planned, intents) if planning.refill else Counter()
        failure = unknown_tools_failure(self.planner.role_id, unknown)
        return Selection(intents, unknown, failure, spare, asks=tuple(asks))

    def plans_itself(self, run: Run) -> bool:
        """Whether the plan is the only tool offered, and the confirm role alone decides.

        A catalog of one action leaves the planning role one choice, to call it or not, and
        with ``abstain`` the confirm role makes that choice after it anyway: of 20 held-out
        requests no offered tool fits, the planning role alone declined 2, with the check 17.
        The planning call is left out (one model call of three on such a request). A read-only
        tool is not checked (``confirm_intents``), so its plan is still asked for; ``asks``
        plans from the request's words, so it is asked too.
        """
        planning = self.planning
        if not planning.lone_tool or planning.asks or len(run.toolbox) != 1:
            return False
        return not next(iter(run.toolbox)).read_only

    def act(self, run: Run, selection: Selection) -> Result:
        """Make the planned calls with retries, then reply (as the run's ``ending`` says).

        A plan with no tool is answered by the chat role, and so is one whose every call
        lacked a value the user never gave (``require_stated``): the reply may ask for it.
        """
        intents, tools = selection.plan, selection.tools
        replies = self.replies()
        run.ledger.leave_open(open_asks(selection.asks, intents))
        if not tools:
            return without_tools(run, replies, intents, selection.failure)
        run.ledger.allow_waiting(self.planning.rounds > 1)
        skipped = call_until_exhausted(
            run, self.parameters, tools, self.calling, selection.spare, selection.words()
        )
        if run.calls and all(call.never_made for call in run.calls):
            return without_tools(run, replies, intents)
        if self.planning.replan and run.calls and run.calls[0].exhausted:
            return replanned(run, intents, skipped, self)
        intents = self.more_rounds(run, intents)
        return after_calls(run, replies, intents, skipped=skipped)

    def more_rounds(self, run: Run, intents: list[str]) -> list[str]:
        """Make the calls a plan with the results shown still lacks; return the whole plan.

        Calls planned together run in order, each shown the results before it, so "find my
        city, then its weather" takes the city from the lookup. A call whose required values
        are stated nowhere, results included, waited instead (``call_with_retries``): its
        value must come from a result nobody asked for yet. Where read-only tools may hold it
        (``lookups_for``: "unpin the vows draft" needs the note's id, which the notes listing
        gives) they are called and the waiting calls written again with their results in
        view. Else the planning role is asked again with the results among the earlier
        turns, and the calls it plans beyond those already made (counted per tool) are made.
        Up to ``rounds`` rounds in all; in the last one nothing waits. A request with no
        waiting call is not planned again: it costs nothing.
        """
        for left in reversed(range(self.planning.rounds - 1)):
            waiting = list(run.waiting)
            reads = lookups_for(run, waiting)
            if not waiting or not (reads or returned_results(run.calls)):
                break
            run.ledger.next_round(may_wait=left > 0)
            if reads:
                looked_up = look_up(run, self.parameters, self.calling, reads)
                call_until_exhausted(run, self.parameters, waiting, self.calling)
                intents = [*intents, *looked_up]
                continue
            conversation = with_results(run.conversation, run.calls)
            missing = still_missing(self.select(run, conversation=conversation), run.calls)
            if not missing.tools:
                break
            call_until_exhausted(
                run, self.parameters, missing.tools, self.calling, missing.spare, missing.words()
            )
            intents = [*intents, *missing.tools]
        return intents
