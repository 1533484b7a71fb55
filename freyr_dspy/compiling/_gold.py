"""Gold-labelled demos: every role's demos taken from the trainset's gold tool calls.

DSPy's ``LabeledFewShot`` copies whole training examples into every predictor, which only
works when one predictor sees the whole task. A FREYR program has several roles with their
own fields, so the labels must be translated per role. This module does that by *replaying*
each training example through the real program with an oracle LM that answers every role
from the example's gold calls; DSPy's trace then yields one correctly formatted demo per
role call (the same mechanism ``BootstrapFewShot`` uses with a teacher). A tiny model gets
demos that no model had to get right first.

The oracle knows the built-in roles; strategies with their own roles add theirs with
``register_gold_answer``. A role the oracle cannot answer ends that replay, keeping the demos
of the roles answered before it.

Every demo records what it was made for (``DEMO_META``): the tools its prompt offered (its
toolbox; for a demo showing one tool's spec, that tool) and the decision its answer makes,
so a contrastive pool shows a request only demos of its own tools. A replay may also follow
a *given* plan (``plans``: the tools the uncompiled program planned for that request): the
``confirm`` role is then shown those tools and answers from the gold, ``false`` for a tool
the request does not ask for - the demos that teach the check to say no.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy

from freyr_dspy.benchmark import GoldCall, gold_calls
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import CONVERSATION, DEMO_META
from freyr_dspy.roles import ASK_WORDS_MOST, NO_TOOL
from freyr_dspy.testing import Answer, FakeCall, FakeEngine
from freyr_dspy.tools import catalog_names

__all__ = [
    "GoldContext",
    "ask_quotes",
    "demo_decision",
    "detached_copy",
    "gold_demos",
    "plan_decision",
    "register_gold_answer",
    "select_demos",
    "shorten",
]

logger = logging.getLogger(__name__)


@dataclass
class GoldContext:
    """The gold of the example being replayed, and what the oracle has used of it."""

    calls: list[GoldCall]
    reply: str | None = None
    used: Counter[str] = field(default_factory=Counter)
    abstained: bool = False
    #: Roles answered with a placeholder in this replay: their demos are not gold.
    untrusted: set[str] = field(default_factory=set)
    #: Tool name -> library, for the gate role.
    libraries: dict[str, str] = field(default_factory=dict)
    #: The plan the intent role answers instead of the gold tools (a replay of a given plan).
    planned: list[str] | None = None

    def next_arguments(self, tool: str) -> dict[str, Any] | None:
        """Arguments of the next not-yet-used gold call of ``tool``."""
        matching = [c for c in self.calls if c.tool == tool]
        index = self.used[tool]
        if index >= len(matching) or matching[index].arguments is None:
            return None
        self.used[tool] += 1
        return dict(matching[index].arguments or {})


GoldAnswer = Callable[[FakeCall, GoldContext], Answer | None]

_SPEC_NAME = re.compile(r"^\s*-\s*([\w.-]+)\s*:", re.M)


def _intent(call: FakeCall, gold: GoldContext) -> Answer | None:
    if gold.planned is not None:
        return {"intents": list(gold.planned) or [CONVERSATION]}
    return {"intents": [c.tool for c in gold.calls] or [CONVERSATION]}


def _asks(call: FakeCall, gold: GoldContext) -> Answer | None:
    message = call.inputs.get("message", "")
    tools = [c.tool for c in gold.calls]
    if not tools:
        return {"asks": [{"ask": _clip(message), "tool": NO_TOOL}]}
    quotes = ask_quotes(message, [c.arguments or {} for c in gold.calls])
    return {"asks": [{"ask": q, "tool": t} for q, t in zip(quotes, tools, strict=True)]}


def _parameters(call: FakeCall, gold: GoldContext) -> Answer | None:
    match = _SPEC_NAME.search(call.inputs.get("tool", ""))
    arguments = gold.next_arguments(match.group(1)) if match else None
    return None if arguments is None else {"arguments": arguments}


def _summary(call: FakeCall, gold: GoldContext) -> Answer | None:
    if gold.reply:
        return {"reply": gold.reply}
    outcomes = call.inputs.get("outcomes", "")
    messages = [line.split("): ", 1)[-1].strip() for line in outcomes.splitlines() if line]
    return {"reply": " ".join(messages) or "Done."}


def _chat(call: FakeCall, gold: GoldContext) -> Answer | None:
    return {"reply": gold.reply} if gold.reply else None


_CATALOG_NAME = re.compile(r"^\s*-\s*(.+?)(?::\s|:?$)", re.M)


def _tool_selection(call: FakeCall, gold: GoldContext) -> Answer | None:
    wanted = {c.tool for c in gold.calls}
    names = _CATALOG_NAME.findall(call.inputs.get("tools", ""))
    lines = [f"{name} -- {'YES' if name in wanted else 'NO'}" for name in names]
    needed = ", ".join(n for n in names if n in wanted) or "no tool"
    return {
        "thinking": f"The message needs {needed}.",
        "assessment": "\n".join([*lines, "Assessment finished."]),
    }


def _confirm(call: FakeCall, gold: GoldContext) -> Answer | None:
    wanted = {c.tool for c in gold.calls}
    names = _CATALOG_NAME.findall(call.inputs.get("tools", ""))
    return {"asked": {name: name in wanted for name in names}}


def _library(call: FakeCall, gold: GoldContext) -> Answer | None:
    libraries = list(dict.fromkeys(gold.libraries.get(c.tool, "general") for c in gold.calls))
    return {"selected": libraries or ["none"]}


#: Answers that keep a replay going when a role has no gold (its demos are then dropped).
_PLACEHOLDERS: dict[str, Answer] = {"chat": {"reply": "OK."}, "summary": {"reply": "Done."}}


GOLD_ANSWERS: dict[str, GoldAnswer] = {
    "intent": _intent,
    "asks": _asks,
    "confirm": _confirm,
    "parameters": _parameters,
    "summary": _summary,
    "chat": _chat,
    "tool_selection": _tool_selection,
    "library": _library,
}


#: Where a request's asks part: commas, semicolons, "and", "then", sentence ends.
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;]|\band\b|\bthen\b|\balso\b|[.?!](?=\s|$))\s*", re.I)


def ask_quotes(message: str, calls: Sequence[dict[str, Any]]) -> list[str]:
    """The words of ``message`` each call answers: its clause, found by the call's values.

    One call answers the whole message. For several, the message is cut into clauses and each
    call takes the clause (and those between it and the next call's) that states most of its
    values; a call whose values no clause states quotes the whole message.
    """
    if len(calls) <= 1:
        return [_clip(message)] * len(calls)
    clauses = [c for c in _CLAUSE_BREAK.split(message) if c and c.strip()]
    picked = [_best_clause(clauses, arguments) for arguments in calls]
    return [_clip(clauses[i]) if i is not None else _clip(message) for i in picked]


def _best_clause(clauses: Sequence[str], arguments: dict[str, Any]) -> int | None:
    values = [str(v) for v in _leaves(arguments) if str(v).strip()]
    words = [re.compile(rf"(?<!\w){re.escape(v)}(?!\w)", re.IGNORECASE) for v in values]
    scores = [sum(bool(w.search(clause)) for w in words) for clause in clauses]
    best = max(range(len(clauses)), key=lambda i: scores[i], default=None)
    return best if best is not None and scores[best] > 0 else None


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if isinstance(value, bool) or value is None else [value]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ASK_WORDS_MOST else text[: ASK_WORDS_MOST - 1].rstrip() + "…"


def register_gold_answer(role: str, answer: GoldAnswer) -> None:
    """Teach the oracle a role: ``answer(call, gold)`` returns outputs, or None to abstain."""
    GOLD_ANSWERS[role] = answer


class _OracleEngine(FakeEngine):
    """Answers from the gold of the example being replayed; abstains by raising."""

    def __init__(self) -> None:
        super().__init__()
        self.gold = GoldContext(calls=[])

    def answer(self, call: FakeCall) -> Answer:
        answer_fn = GOLD_ANSWERS.get(call.role)
        answer = answer_fn(call, self.gold) if answer_fn else None
        if answer is None and call.role in _PLACEHOLDERS:
            self.gold.untrusted.add(call.role)
            return _PLACEHOLDERS[call.role]
        if answer is None:
            self.gold.abstained = True
            raise _Abstain(call.role)
        return answer


class _Abstain(Exception):
    """The oracle has no gold answer for a role call."""


def gold_demos(
    program: FreyrProgram,
    examples: Sequence[dspy.Example],
    metric: BenchmarkMetric,
    *,
    plans: Mapping[str, Sequence[str]] | None = None,
    roles: Collection[str] | None = None,
) -> dict[str, list[dspy.Example]]:
    """Replay every example with the oracle; return predictor name -> demos.

    A replay that completes but fails the benchmark's metric contributes nothing: its gold
    is inconsistent with what the program can do. A replay the oracle abstained from keeps
    the demos recorded before it stopped.

    With ``plans`` (step id -> planned tools), only the examples it names are replayed, each
    with the intent role answering that plan; the metric is not asked (a wrong plan fails it
    by design) and only the demos of ``roles`` are kept.
    """
    engine = _OracleEngine()
    oracle = detached_copy(program)
    oracle.set_lm(dspy.LM("gold/oracle", engine=engine, cache=False))
    names = {id(p): name for name, p in oracle.named_predictors()}
    libraries = {t: lib for lib, tools in program.toolbox.libraries.items() for t in tools}
    demos: dict[str, list[dspy.Example]] = {name: [] for name in names.values()}
    for example in examples:
        calls = gold_calls(example.step)
        planned = None if plans is None else plans.get(example.step.id)
        if calls is None or (plans is not None and planned is None):
            continue
        engine.gold = GoldContext(
            calls=calls,
            reply=example.step.expected.get("reply"),
            libraries=libraries,
            planned=None if planned is None else list(planned),
        )
        scope = _toolbox_names(example, program)
        for predictor, demo in _replay(oracle, example, metric, engine, checked=plans is None):
            if roles is None or _role_of(oracle, predictor) in roles:
                demos[names[id(predictor)]].append(_tagged(demo, scope))
    return demos


def _toolbox_names(example: dspy.Example, program: FreyrProgram) -> list[str]:
    toolbox = example.get("toolbox") or program.toolbox
    return list(toolbox.names)


def _tagged(demo: dspy.Example, toolbox: Sequence[str]) -> dspy.Example:
    """``demo`` with what it was made for (``DEMO_META``): its tools and its decision.

    A demo showing one tool's spec (the parameters role) is for that tool; any other demo is
    for its toolbox.
    """
    spec = demo.get("tool")
    one_tool = catalog_names(spec) if isinstance(spec, str) else []
    scope = one_tool if len(one_tool) == 1 else list(toolbox)
    return dspy.Example(**demo, **{DEMO_META: {"scope": scope, "decision": demo_decision(demo)}})


def _replay(
    oracle: FreyrProgram,
    example: dspy.Example,
    metric: BenchmarkMetric,
    engine: _OracleEngine,
    *,
    checked: bool = True,
) -> list[tuple[Any, dspy.Example]]:
    with dspy.context(trace=[]):
        trace = dspy.settings.trace
        try:
            prediction = oracle(**example.inputs())
        except _Abstain:
            prediction = None
    if checked and prediction is not None and not engine.gold.abstained:
        if metric(example, prediction) < 1.0:
            logger.info("gold calls of %s fail the metric; no demos from it", example.step.id)
            return []
    recorded = []
    for predictor, inputs, outputs in trace:
        if _role_of(oracle, predictor) in engine.gold.untrusted:
            continue
        values = {k: outputs[k] for k in predictor.signature.output_fields}
        recorded.append((predictor, dspy.Example(augmented=True, **inputs, **values)))
    return recorded


def _role_of(program: FreyrProgram, predictor: Any) -> str:
    for role in program.role_names:
        if any(p is predictor for p in program.role(role).predictors()):
            return role
    return ""


def detached_copy(program: FreyrProgram) -> FreyrProgram:
    """Deep copy without deep-copying the LMs (engines hold locks and model handles)."""
    lms = {name: p.lm for name, p in program.named_predictors()}
    program.set_lm(None)
    try:
        copy: FreyrProgram = program.deepcopy()
    finally:
        for name, predictor in program.named_predictors():
            predictor.lm = lms[name]
    for name, predictor in copy.named_predictors():
        predictor.lm = lms[name]
    return copy


def select_demos(
    demos: Sequence[dspy.Example],
    k: int,
    *,
    outputs: Sequence[str],
    seed: int = 0,
    maxlen: int | None = None,
) -> list[dspy.Example]:
    """Pick ``k`` short, varied demos: one per distinct answer first, shortest first.

    Varied answers teach the label set (e.g. every tool name); short demos keep a tiny
    model's context free. A plan's demos show first the decisions small models get wrong
    (``plan_decision``): a plan with no tool (nothing offered fits), then one with several
    calls (several asks), then the rest. ``maxlen`` cuts long input fields (catalogs, big
    states); the ``outputs`` (the answers) are never cut.
    """
    groups: dict[str, list[dspy.Example]] = {}
    for demo in sorted(demos, key=_size):
        key = repr(sorted((name, str(demo.get(name))) for name in outputs))
        groups.setdefault(key, []).append(demo)
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    # NOTE: a stable sort keeps the seeded order within each kind of decision.
    order.sort(key=lambda key: _DECISION_ORDER[plan_decision(groups[key][0])])
    chosen: list[dspy.Example] = []
    while len(chosen) < k and any(groups.values()):
        for key in order:
            if groups[key] and len(chosen) < k:
                chosen.append(without_meta(groups[key].pop(0)))
    return [shorten(d, maxlen, keep=outputs) for d in chosen] if maxlen else chosen


def without_meta(demo: dspy.Example) -> dspy.Example:
    """A fixed demo keeps only its fields: what it was made for matters to pools only."""
    if DEMO_META not in demo:
        return demo
    return dspy.Example(**{k: v for k, v in demo.items() if k != DEMO_META})


#: The decisions a plan's demo shows, in the order ``select_demos`` prefers them.
_DECISION_ORDER = {"no-call": 0, "several": 1, "one": 2, "other": 3}


def demo_decision(demo: dspy.Example) -> str:
    """What a demo decides: a plan's ``plan_decision``, a check's ``keeps`` or ``rejects``."""
    verdicts = demo.get("asked")
    if isinstance(verdicts, dict) and verdicts:
        return "keeps" if all(verdicts.values()) else "rejects"
    return plan_decision(demo)


def plan_decision(demo: dspy.Example) -> str:
    """What a planning role's demo decides: ``no-call``, ``several``, ``one`` or ``other``.

    Reads the intent role's ``intents`` or the asks role's ``asks``; other roles' demos are
    ``other``.
    """
    planned = demo.get("intents")
    if planned is None and isinstance(demo.get("asks"), list):
        planned = [a.get("tool") for a in demo["asks"] if isinstance(a, dict)]
    if not isinstance(planned, list):
        return "other"
    tools = [name for name in planned if name not in (CONVERSATION, NO_TOOL)]
    return "no-call" if not tools else "several" if len(planned) > 1 else "one"


def shorten(demo: dspy.Example, maxlen: int, *, keep: Sequence[str] = ()) -> dspy.Example:
    """Cut string fields longer than ``maxlen`` characters, except ``keep``; mark the cut."""
    values = {
        name: value[:maxlen].rstrip() + " …"
        if isinstance(value, str) and len(value) > maxlen and name not in keep
        else value
        for name, value in demo.items()
    }
    return dspy.Example(**values)


def _size(demo: dspy.Example) -> int:
    return sum(len(str(v)) for k, v in demo.items() if k != DEMO_META)
