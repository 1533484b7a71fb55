"""Gold answers of the CallNavi roles, so compiling can build demos from labelled questions.

``freyr_dspy.compiling._gold`` replays each training question through the program with an oracle LM
that answers every role from the question's gold calls; these functions teach it the
CallNavi roles. The gold says which calls run in which order and with which arguments; for
backward thinking, a ``"$$$"`` argument of a call that has an earlier call is read as a
missing input, and the gold call just before it as the one that provides it.
"""

from __future__ import annotations

import re
from typing import Any

from freyr_dspy.benchmarks.callnavi._data import PLACEHOLDER
from freyr_dspy.compiling import GoldContext, register_gold_answer
from freyr_dspy.testing import Answer, FakeCall

__all__: list[str] = []  # registers gold answers when imported; exports nothing

_CALL_NAME = re.compile(r"call \d+:\s*([\w.-]+)\s*\(")
_SPEC_NAME = re.compile(r"^\s*-?\s*([\w.-]+)\s*\(")
_NEEDED = re.compile(r"for the call ([\w.-]+)")


def _single(call: FakeCall, gold: GoldContext) -> Answer | None:
    return {
        "API": [c.tool for c in gold.calls],
        "parameters": [dict(c.arguments or {}) for c in gold.calls],
    }


def _router(call: FakeCall, gold: GoldContext) -> Answer | None:
    return {"apis": [c.tool for c in gold.calls]}


def _call_parameters(call: FakeCall, gold: GoldContext) -> Answer | None:
    match = _CALL_NAME.search(call.inputs.get("call", ""))
    arguments = gold.next_arguments(match.group(1)) if match else None
    return None if arguments is None else {"arguments": arguments}


def _final_call(call: FakeCall, gold: GoldContext) -> Answer | None:
    return {"final_api": gold.calls[-1].tool} if gold.calls else None


def _missing_inputs(call: FakeCall, gold: GoldContext) -> Answer | None:
    match = _SPEC_NAME.search(call.inputs.get("call", ""))
    index = _first_index(gold, match.group(1)) if match else None
    if index is None:
        return None
    arguments: dict[str, Any] = gold.calls[index].arguments or {}
    missing = [k for k, v in arguments.items() if v == PLACEHOLDER] if index > 0 else []
    return {"missing": missing}


def _supporting_call(call: FakeCall, gold: GoldContext) -> Answer | None:
    match = _NEEDED.search(call.inputs.get("needed", ""))
    index = _first_index(gold, match.group(1)) if match else None
    if index is None:
        return None
    return {"supporting_api": gold.calls[index - 1].tool if index > 0 else "none"}


def _first_index(gold: GoldContext, tool: str) -> int | None:
    return next((i for i, c in enumerate(gold.calls) if c.tool == tool), None)


for _role, _answer in {
    "single": _single,
    "router": _router,
    "call_parameters": _call_parameters,
    "final_call": _final_call,
    "missing_inputs": _missing_inputs,
    "supporting_call": _supporting_call,
}.items():
    register_gold_answer(_role, _answer)
