"""``stream: true``: an answer sent as OpenAI ``chat.completion.chunk`` events while it is made.

The reply's words go out while the chat or summary role writes them, and each tool call once
it is certain (``live.LiveAnswer``). The response starts with the first such piece: until
then an error (a full queue, a failed model) can still be an HTTP status. After it, an error
is sent as an ``{"error": {...}}`` event (the SDKs raise it), and the stream ends.

Events: a chunk with the role, the pieces as they come (words; each tool call as its id,
type and name, then its arguments in pieces), what the final answer holds beyond them, a
chunk with the ``finish_reason``, a usage chunk when ``stream_options.include_usage`` asks
for it, and ``data: [DONE]``. A program that ends before any piece is ready (a reply from a
backend that cannot stream, a structured reply) has its answer sent the same way at the end.
Clients that reassemble deltas (the SDKs, LangChain) get exactly the non-streamed answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from freyr_dspy.serve._errors import ApiError
from freyr_dspy.serve._live import Delta, LiveAnswer
from freyr_dspy.serve._protocol import ChatCompletion, ToolCall, new_completion_id

__all__ = ["first_delta", "live_events", "new_head", "sse_events"]

#: Words per content chunk of an answer sent whole.
WORDS_PER_PIECE = 4
#: Characters of tool call arguments per chunk.
ARGUMENT_PIECE = 32

#: The chunk fields every event of one answer shares.
Head = dict[str, Any]


def sse_events(completion: ChatCompletion, *, include_usage: bool = False) -> Iterator[str]:
    """The events of a finished ``completion``, each ``data: ...`` and its blank line."""
    head = head_of(completion)
    choice = completion.choices[0]
    yield _event(head, {"role": "assistant", "content": ""})
    for piece in _pieces(choice.message.content or ""):
        yield _event(head, {"content": piece})
    for index, call in enumerate(choice.message.tool_calls or []):
        for delta in _call_deltas(index, call):
            yield _event(head, {"tool_calls": [delta]})
    yield from _ending(completion, head, include_usage)


async def first_delta(live: LiveAnswer, running: asyncio.Future[Any]) -> Delta | None:
    """The first streamed piece, or None when the program ended before one was ready."""
    getter = asyncio.ensure_future(live.deltas.get())
    try:
        await asyncio.wait({getter, running}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getter.done():  # the run ended first, or the client left (cancelled)
            getter.cancel()
    return getter.result() if getter.done() and not getter.cancelled() else None


async def live_events(
    head: Head,
    first: Delta,
    live: LiveAnswer,
    running: asyncio.Future[Any],
    final: Callable[[], Awaitable[ChatCompletion]],
    *,
    include_usage: bool = False,
) -> AsyncIterator[str]:
    """The events of an answer whose first piece is ``first``, until the program's end.

    ``running`` is the program's run; ``final()`` then gives the final completion (an
    ``ApiError`` it raises is sent as an error event).
    """
    yield _event(head, {"role": "assistant", "content": ""})
    for event in _delta_events(head, first):
        yield event
    while (delta := await first_delta(live, running)) is not None:
        for event in _delta_events(head, delta):
            yield event
    while not live.deltas.empty():
        for event in _delta_events(head, live.deltas.get_nowait()):
            yield event
    try:
        completion = (await final()).model_copy(
            update={"id": head["id"], "created": head["created"]}
        )
    except ApiError as exc:
        yield _data(exc.response_body())
        return
    for delta in live.rest(completion.choices[0]):
        for event in _delta_events(head, delta):
            yield event
    for event in _ending(completion, head, include_usage):
        yield event


def head_of(completion: ChatCompletion) -> Head:
    """The fields each chunk of ``completion`` repeats."""
    return {
        "id": completion.id,
        "object": "chat.completion.chunk",
        "created": completion.created,
        "model": completion.model,
        "system_fingerprint": completion.system_fingerprint,
    }


def new_head(model: str, fingerprint: str) -> Head:
    """The fields each chunk of an answer still being made repeats (a new id)."""
    return {
        "id": new_completion_id(),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": fingerprint,
    }


def _ending(completion: ChatCompletion, head: Head, include_usage: bool) -> Iterator[str]:
    """The finish reason, the usage when asked for, and ``[DONE]``."""
    yield _event(head, {}, finish_reason=completion.choices[0].finish_reason)
    if include_usage:
        yield _data({**head, "choices": [], "usage": completion.usage.model_dump()})
    yield "data: [DONE]\n\n"


def _delta_events(head: Head, delta: Delta) -> Iterator[str]:
    if delta.call is None:
        yield _event(head, {"content": delta.text})
        return
    for piece in _call_deltas(delta.index, delta.call):
        yield _event(head, {"tool_calls": [piece]})


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


def _event(head: Head, delta: dict[str, Any], finish_reason: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
    return _data({**head, "choices": [choice]})


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
