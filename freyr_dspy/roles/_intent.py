"""``intent``: which tools the latest message needs (FREYR's LLM_intent).

Per call, ``intent_contract`` types the answer by the catalog: an array of its tool names or
``conversation``, at most the plan cap.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dspy

from freyr_dspy.prompting import CONVERSATION, Contract, names_schema, split_items
from freyr_dspy.roles._base import Role

__all__ = ["IntentClassifier", "IntentSignature", "intent_contract"]


class IntentSignature(dspy.Signature):
    """Decide which tools must run to fulfil the user's latest message.

    List the names of the tools to call, in the order they should run, one entry per call: a
    tool the message asks for twice (two cities, two amounts) is listed twice. List only what
    the message asks for, not a step that might come next. If no listed tool does what the
    message asks - a greeting, a question about the assistant, an unclear request, or a task
    none of the tools can do - answer only `conversation`.
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    tools: str = dspy.InputField(desc="the available tools: name and what it does")
    state: str = dspy.InputField(desc="the current state of the application")
    intents: list[str] = dspy.OutputField(
        desc="tool names to call, in order, or ['conversation'] when no tool is needed"
    )


class IntentClassifier(Role):
    """Recognise the intents (tool names) of a message."""

    signature = IntentSignature
    default_max_tokens = 96

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read intents from free text: commas, bullets, JSON lists."""
        return {"intents": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Split a comma/bullet list written into one list item."""
        return {"intents": split_items(outputs.get("intents"))}


def intent_contract(names: Iterable[str], max_items: int, *, conversation: bool = True) -> Contract:
    """The intents of one call: names of ``names`` or ``conversation``, at most ``max_items``.

    ``conversation=False`` leaves ``conversation`` out: the answer must name tools.
    """
    allowed = [*names, CONVERSATION] if conversation else list(names)
    return {"intents": names_schema(allowed, max_items=max_items)}
