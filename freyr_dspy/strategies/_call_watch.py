"""Hear of each tool call as soon as a run records it, before the run ends.

A run's calls are its result's, read when it returns; a caller that passes calls on as they
come (``freyr serve`` streaming them to a client) installs a listener around the run, and
``Run.add_call`` tells it of each call the moment its last attempt is over.

NOTE: a context variable, as ``freyr_dspy.text_stream``: each thread has its own, so runs at
once never hear each other's calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from freyr_dspy.schemas import CallRecord

__all__ = ["call_recorded", "watching_calls"]

#: Called with each call a run records (failed ones too), in order.
CallListener = Callable[[CallRecord], None]

_LISTENER: ContextVar[CallListener | None] = ContextVar("freyr_call_listener", default=None)


@contextmanager
def watching_calls(listener: CallListener | None) -> Iterator[None]:
    """Tell ``listener`` of every call the runs in the block record (None: nobody)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def call_recorded(record: CallRecord) -> None:
    """Tell the installed listener (if any) of ``record``."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(record)
