"""``summary``: one reply to the user from the outcomes of the tool calls (FREYR's LLM_summary)."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.prompting import parse_text
from freyr_dspy.roles._base import Role

__all__ = ["Summarizer", "SummarySignature"]


class SummarySignature(dspy.Signature):
    """Tell the user, in one short message, what was done for their request.

    Report each outcome faithfully: say what succeeded and explain any error plainly.
    """

    message: str = dspy.InputField(desc="the user's latest message")
    outcomes: str = dspy.InputField(desc="each tool call made and its outcome")
    state: str = dspy.InputField(desc="the state of the application after the calls")
    reply: str = dspy.OutputField(desc="the message to show the user")


class Summarizer(Role):
    """Write the reply that reports the tool outcomes."""

    signature = SummarySignature
    default_max_tokens = 160
    writes_reply = True

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Unwrap fences and stray field markers."""
        return {"reply": parse_text(outputs.get("reply"))}
