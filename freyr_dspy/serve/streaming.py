"""``stream: true``: a finished completion sent as OpenAI ``chat.completion.chunk`` events.

The program runs to the end first (its roles' answers are JSON read whole, and an error must
still be able to become an HTTP status), then the answer goes out as server-sent events: a
chunk with the role, the reply in pieces of a few words or each tool call (its id, type and
name, then its arguments in pieces), a chunk with the ``finish_reason``, a usage chunk when
``stream_options.include_usage`` asks for it, and ``data: [DONE]``. Clients that reassemble
deltas (the SDKs, LangChain) get exactly the non-streamed answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from freyr_dspy.serve.protocol import ChatCompletion, ToolCall

__all__ = ["ARGUMENT_PIECE", "WORDS_PER_PIECE", "sse_events"]

#: Words per content chunk.
WORDS_PER_PIECE = 4
#: Characters of tool call arguments per chunk.
ARGUMENT_PIECE = 32


def sse_events(completion: ChatCompletion, *, include_usage: bool = False) -> Iterator[str]:
    """The server-sent events of ``completion``, each ``data: ...`` with its blank line."""
    choice = completion.choices[0]
    yield _event(completion, {"role": "assistant", "content": ""})
    for piece in _pieces(choice.message.content or ""):
        yield _event(completion, {"content": piece})
    for index, call in enumerate(choice.message.tool_calls or []):
        for delta in _call_deltas(index, call):
            yield _event(completion, {"tool_calls": [delta]})
    yield _event(completion, {}, finish_reason=choice.finish_reason)
    if include_usage:
        yield _data({**_head(completion), "choices": [], "usage": completion.usage.model_dump()})
    yield "data: [DONE]\n\n"


def _pieces(text: str) -> Iterator[str]:
    """``text`` in pieces of a few words, each with the spacing that follows it."""
    words = re.findall(r"\S+\s*|\s+", text)
    for start in range(0, len(words), WORDS_PER_PIECE):
        yield "".join(words[start : start + WORDS_PER_PIECE])


def _call_deltas(index: int, call: ToolCall) -> Iterator[dict[str, Any]]:
    """The deltas of one tool call: id, type and name first, then the arguments in pieces."""
    yield {
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.function.name, "arguments": ""},
    }
    text = call.function.arguments
    for start in range(0, len(text), ARGUMENT_PIECE):
        yield {"index": index, "function": {"arguments": text[start : start + ARGUMENT_PIECE]}}


def _head(completion: ChatCompletion) -> dict[str, Any]:
    return {
        "id": completion.id,
        "object": "chat.completion.chunk",
        "created": completion.created,
        "model": completion.model,
        "system_fingerprint": completion.system_fingerprint,
    }


def _event(
    completion: ChatCompletion, delta: dict[str, Any], finish_reason: str | None = None
) -> str:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return _data({**_head(completion), "choices": [choice]})


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
