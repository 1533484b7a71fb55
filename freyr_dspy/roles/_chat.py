"""``chat``: a plain conversational reply when no tool is needed (FREYR's LLM_chat)."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.prompting import parse_text
from freyr_dspy.roles._base import Role

__all__ = ["ChatResponder", "ChatSignature"]


class ChatSignature(dspy.Signature):
    """Reply to the user's message without using any tool.

    Answer questions about the current state, ask for missing details, or make suggestions.
    No tool has run for this message: never say that anything was done, sent, booked or
    changed. If the message asks for an action, say plainly that you cannot do it.
    You have no live information (rates, prices, scores, news, weather): never give such a
    figure; say you cannot look it up. You are an AI assistant, a computer program: never
    claim to be a person.
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    state: str = dspy.InputField(desc="the current state of the application")
    reply: str = dspy.OutputField(desc="the message to show the user")


class ChatResponder(Role):
    """Hold the conversation when the request needs no tool."""

    signature = ChatSignature
    default_max_tokens = 160
    writes_reply = True

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Unwrap fences and stray field markers."""
        return {"reply": parse_text(outputs.get("reply"))}
