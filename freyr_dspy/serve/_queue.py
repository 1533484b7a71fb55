"""Admission: ``concurrency`` program runs at a time, a bounded queue before them, then 503.

Embedded models run one call at a time (one llama.cpp context), so by default requests run
one by one in a single worker thread; programs on remote models may run ``concurrency`` at
once, each in its own worker (``serve.pool``). Up to ``max_queue`` more wait their turn; a
request arriving when every place is taken is refused at once with 503 and a
``Retry-After`` from the recent pace.
A waiting client that disconnects gives its place up. A running program cannot be stopped
halfway (a model call has no cancel): its thread keeps the worker until it finishes, even
after a timeout or a disconnect, so the next request never shares the model with it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from freyr_dspy.serve._errors import queue_full, timed_out

__all__ = ["Admission", "ClientGone", "Timed"]

T = TypeVar("T")

#: Weight of the newest run in the average run time behind ``Retry-After``.
_PACE_WEIGHT = 0.2


class ClientGone(Exception):
    """Internal signal: the client disconnected while its request waited."""


@dataclass(frozen=True)
class Timed(Generic[T]):
    """A job's value with the seconds spent waiting for the worker and running."""

    value: T
    queue_seconds: float
    run_seconds: float


class Admission:
    """Run at most ``concurrency`` jobs at once in worker threads, ``max_queue`` waiting."""

    def __init__(self, max_queue: int, *, timeout: float, concurrency: int = 1) -> None:
        self.max_queue = max_queue
        self.timeout = timeout
        self.concurrency = concurrency
        self.waiting = 0
        self.running = 0
        self._slots = asyncio.Semaphore(concurrency)
        self._workers = ThreadPoolExecutor(
            max_workers=concurrency, thread_name_prefix="freyr-serve"
        )
        self._pace = 1.0  # average seconds per run

    async def run(
        self, job: Callable[[], T], client_left: Callable[[], Awaitable[object]]
    ) -> Timed[T]:
        """Wait for the worker, then run ``job`` in it.

        ``client_left()`` returns when the client disconnects; while the request waits, it
        is watched so that a client who leaves gives its place up.

        Raises:
            ApiError: 503 when the queue is full; 504 when the job outlasts the timeout.
            ClientGone: when the client disconnected while waiting.
        """
        if self.waiting + self.running >= self.max_queue + self.concurrency:
            raise queue_full(self.waiting, self.retry_after())
        arrived = time.perf_counter()
        self.waiting += 1
        try:
            await self._acquire(client_left)
        finally:
            self.waiting -= 1
        started = time.perf_counter()
        future = asyncio.get_running_loop().run_in_executor(self._workers, job)
        self.running += 1
        future.add_done_callback(lambda _: self._release(started))
        try:
            # NOTE: shielded: a timeout (or a cancelled handler) must not mark the job done
            # while its thread still runs, or the next job would share the model with it.
            value = await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError as exc:
            raise timed_out(self.timeout) from exc
        return Timed(value, started - arrived, time.perf_counter() - started)

    def retry_after(self) -> int:
        """Seconds until a place is likely free: the queue ahead at the recent pace."""
        ahead = (self.waiting + self.running) / self.concurrency
        return max(1, math.ceil(self._pace * ahead))

    async def _acquire(self, client_left: Callable[[], Awaitable[object]]) -> None:
        if not self._slots.locked():  # the common case under light load: no watcher task
            await self._slots.acquire()
            return
        acquiring = asyncio.ensure_future(self._slots.acquire())
        leaving = asyncio.ensure_future(client_left())
        try:
            await asyncio.wait({acquiring, leaving}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the handler itself was cancelled (shutdown)
            self._abandon(acquiring)
            raise
        finally:
            leaving.cancel()
        if acquiring.done():
            return
        self._abandon(acquiring)
        raise ClientGone

    def _abandon(self, acquiring: asyncio.Future[Any]) -> None:
        """Stop waiting for a slot; if one was granted all the same, pass it on."""
        acquiring.cancel()
        acquiring.add_done_callback(lambda f: None if f.cancelled() else self._slots.release())

    def _release(self, started: float) -> None:
        self.running -= 1
        seconds = time.perf_counter() - started
        self._pace = (1 - _PACE_WEIGHT) * self._pace + _PACE_WEIGHT * seconds
        self._slots.release()

    def close(self) -> None:
        """Stop the worker threads once their jobs (if any) are done."""
        self._workers.shutdown(wait=False, cancel_futures=True)
