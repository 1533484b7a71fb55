"""A request's sampling and reply format, as the overrides its own role calls run under.

``temperature``, ``top_p`` and ``seed`` apply to every role; ``max_tokens`` caps the reply in
words only (the roles that write it: the others write JSON sized by their own caps, and
cutting it would break the call, not shorten it); ``response_format`` holds that reply to a
JSON schema. ``Run.call`` applies them call by call, so the program is never changed and
requests running at once share it.
"""

from __future__ import annotations

from freyr_dspy.serve._protocol import ChatRequest
from freyr_dspy.serve._structured import ReplyFormat
from freyr_dspy.strategies import CallOverrides

__all__ = ["overrides_of"]


def overrides_of(request: ChatRequest, reply: ReplyFormat | None) -> CallOverrides:
    """The overrides ``request`` sets (none: the roles' own settings)."""
    values = {"temperature": request.temperature, "top_p": request.top_p, "seed": request.seed}
    return CallOverrides(
        sampling={name: value for name, value in values.items() if value is not None},
        reply_tokens=request.reply_tokens,
        reply_schema=reply.schema if reply is not None else None,
    )
