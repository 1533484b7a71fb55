"""Replay of in-process model calls already made: a compile study pays for each call once.

A compile study evaluates many configurations of one program on the same rows; most of their
model calls are the very same request (two configurations that differ in a switch the row never
reaches, or in the demos of another role). Greedy decoding with a fixed seed answers an
identical request identically, so while a ``ReplayMemo`` is attached to an engine
(``replaying``), an identical request gets the recorded response back - with its token usage,
so token counts stay exact - and the seconds the first call took are added to
``replayed_seconds``, so a study can still report what each configuration would cost.

Only the in-process llama.cpp engine replays; other backends are called as usual.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["ReplayMemo", "engines_of", "replaying"]

T = TypeVar("T")


@dataclass
class ReplayMemo:
    """Responses by request, and what replaying them saved."""

    hits: int = 0
    misses: int = 0
    #: Seconds the replayed calls took when they were first made.
    replayed_seconds: float = 0.0
    _entries: dict[tuple[str, str], tuple[Any, float]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def recall(self, kind: str, key: str, compute: Callable[[], T]) -> T:
        """The recorded answer to ``(kind, key)``, else ``compute()`` recorded with its seconds."""
        with self._lock:
            known = self._entries.get((kind, key))
            if known is not None:
                self.hits += 1
                self.replayed_seconds += known[1]
                answer: T = known[0]
                return answer
        started = time.perf_counter()
        value = compute()
        with self._lock:
            self.misses += 1
            self._entries[(kind, key)] = (value, time.perf_counter() - started)
        return value

    def __len__(self) -> int:
        return len(self._entries)


def engines_of(lms: Iterable[Any]) -> list[Any]:
    """The distinct engines of ``lms`` that can replay (in-process llama.cpp engines)."""
    engines: dict[int, Any] = {}
    for lm in lms:
        engine = getattr(lm, "engine", None)
        if engine is not None and hasattr(engine, "replay"):
            engines[id(engine)] = engine
    return list(engines.values())


@contextmanager
def replaying(engines: Iterable[Any], memo: ReplayMemo) -> Iterator[ReplayMemo]:
    """Attach ``memo`` to ``engines`` while the block runs (each keeps its previous memo)."""
    attached = list(engines)
    previous = [engine.replay for engine in attached]
    for engine in attached:
        engine.replay = memo
    try:
        yield memo
    finally:
        for engine, before in zip(attached, previous, strict=True):
            engine.replay = before
