"""Text as a model writes it: a listener that engines able to stream feed, piece by piece.

DSPy hands an engine one request and takes one finished response, so a caller that wants the
text sooner (``freyr serve`` streaming a reply) installs a listener for the calls it cares
about; an engine that can stream (the embedded llama.cpp engine, the test fakes) then passes
each piece of its output text to it while it generates, and still returns the whole response
as usual. Engines that cannot stream ignore it: the text then arrives whole, at the end.

NOTE: a context variable, not a setting: each thread (and each asyncio task) has its own, so
requests running at once never feed each other's listeners.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["TextListener", "listening", "text_listener"]

#: Called with each new piece of the output text, in order.
TextListener = Callable[[str], None]

_LISTENER: ContextVar[TextListener | None] = ContextVar("freyr_text_listener", default=None)


@contextmanager
def listening(listener: TextListener | None) -> Iterator[None]:
    """Feed ``listener`` the output text of the model calls made in the block (None: none)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def text_listener() -> TextListener | None:
    """The listener the current model call should feed, if any."""
    return _LISTENER.get()
