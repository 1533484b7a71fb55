"""``asks``: each thing the latest message asks for, in its words, and the tool that does it.

FREYR's intent role writes tool names, one per call. Small models write a tool once when it
is asked for twice ("the weather in Oslo and in Paris" -> one ``get-weather``) and drop an
ask no tool fits without a trace, so the reply cannot say it was not done. This role first
quotes each ask, then names its tool or ``none``: two asks of one tool are two entries, each
with the words its call takes its values from, and an ask with no tool stays on the plan as
one the reply must name as not done.

Per call, ``asks_contract`` types the answer: a list of ``{"ask": ..., "tool": ...}`` whose
``tool`` is a catalog name or ``none``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dspy

from freyr_dspy.prompting import Contract, load_json, name_schema, split_items, strip_fences
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._registry import register_role

__all__ = ["ASK_WORDS_MOST", "NO_TOOL", "AskLister", "asks_contract"]

#: The tool name of an ask no listed tool can do.
NO_TOOL = "none"
#: Longest quote of one ask, in characters: the words that set the ask apart, not the message.
ASK_WORDS_MOST = 100


class AsksSignature(dspy.Signature):
    """List each separate thing the user's latest message asks for, and the tool that does it.

    Write one entry per call to make. If the message asks the same tool for two or more
    values (two cities, two times, three numbers), write one entry per value, each quoting
    only its own part of the message: for "weather in Rome and in Lima" write "weather in
    Rome" and "in Lima". Values of one action (from, to, a date, a name) stay in one entry.
    Name the tool that does exactly what the entry asks, or `none` if no listed tool can do
    it: a greeting, a question about the assistant, or a task none of the tools can do.
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    tools: str = dspy.InputField(desc="the available tools: name and what it does")
    state: str = dspy.InputField(desc="the current state of the application")
    asks: list[dict[str, str]] = dspy.OutputField(
        desc='one {"ask": the words of the message, "tool": a tool name or "none"} per thing asked'
    )


class AskLister(Role):
    """List the asks of a message, each with its tool (or none)."""

    signature = AsksSignature
    # About 25 tokens per ask; plans are capped at a handful of asks.
    default_max_tokens = 200

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read asks from (broken) JSON; other text is read as a list of tool names."""
        parsed = load_json(strip_fences(text), default=None) if text.strip() else None
        return {"asks": parsed if isinstance(parsed, dict | list) else text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the entries that name a tool; an entry written as text is its tool's name."""
        return {"asks": [ask for ask in map(_entry, _as_list(outputs.get("asks"))) if ask]}


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value] if "tool" in value else list(value.get("asks") or [])
    if isinstance(value, list):
        return value
    return [{"ask": "", "tool": item} for item in split_items(value)]


def _entry(value: Any) -> dict[str, str] | None:
    """One ask as ``{"ask": ..., "tool": ...}``, or None when it names no tool."""
    if isinstance(value, str):
        value = {"ask": "", "tool": value}
    if not isinstance(value, dict):
        return None
    tool = str(value.get("tool") or "").strip()
    return {"ask": str(value.get("ask") or "").strip(), "tool": tool} if tool else None


def asks_contract(names: Iterable[str], most: int, *, allow_none: bool = True) -> Contract:
    """The asks of one call: each quotes the message and names a tool of ``names`` (or none).

    ``allow_none=False`` leaves ``none`` out: every ask must name a tool.
    """
    tools = [*names, NO_TOOL] if allow_none else list(names)
    ask = {
        "type": "object",
        "properties": {
            "ask": {"type": "string", "minLength": 1, "maxLength": ASK_WORDS_MOST},
            "tool": name_schema(tools),
        },
        "required": ["ask", "tool"],
        "additionalProperties": False,
    }
    return {"asks": {"type": "array", "items": ask, "minItems": 1, "maxItems": most}}


register_role("asks", AskLister)
