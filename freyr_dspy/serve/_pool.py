"""Requests at once (``--concurrency N``): a copy of each program per request that may run.

A request lays its sampling and ``response_format`` over the roles of the program it runs
(``serve.sampling``, ``serve.structured``), so two requests running at once must not share a
program: each borrows its own copy (``FreyrProgram.deepcopy``: its own predictors and LMs;
an engine stays shared). Only programs whose models are remote may run more than one
request at a time: an in-process llama.cpp model holds one context and answers one call at a
time, so more requests would only queue inside it (and several copies of a program on one
engine would evict each other's prefix cache). Several such models scale as several model
servers, or one server behind several ``freyr serve`` processes (docs/serve.md).
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager

from freyr_dspy.backends._embedded import runs_in_process
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.serve._programs import ServedProgram, ServedPrograms

__all__ = ["program_pools"]


class ProgramPool:
    """``size`` interchangeable copies of one program, lent to one request at a time."""

    def __init__(self, program: FreyrProgram, size: int) -> None:
        self.size = size
        self._free: queue.SimpleQueue[FreyrProgram] = queue.SimpleQueue()
        self._free.put(program)
        for _ in range(size - 1):
            self._free.put(program.deepcopy())

    @contextmanager
    def borrow(self) -> Iterator[FreyrProgram]:
        """Lend a copy for the block (the admission lets ``size`` requests in at most)."""
        program = self._free.get()
        try:
            yield program
        finally:
            self._free.put(program)


def program_pools(programs: ServedPrograms, concurrency: int) -> dict[str, ProgramPool]:
    """A pool of ``concurrency`` copies per served program, by its name.

    Raises:
        ConfigError: when ``concurrency`` > 1 and a program runs a model in this process.
    """
    if concurrency > 1:
        for served in programs.programs:
            _check_remote(served, concurrency)
    return {served.name: ProgramPool(served.program, concurrency) for served in programs.programs}


def _check_remote(served: ServedProgram, concurrency: int) -> None:
    """Refuse running requests at once on an in-process model (see the module docstring)."""
    local = sorted(
        {
            predictor.lm.model
            for predictor in served.program.predictors()
            if predictor.lm is not None and runs_in_process(predictor.lm.model)
        }
    )
    if local:
        raise ConfigError(
            f"--concurrency {concurrency}: {served.name} runs {', '.join(local)} in this "
            "process, which answers one call at a time; leave --concurrency at 1, or run the "
            "model in a server (python -m llama_cpp.server) and serve it with --model "
            "openai/NAME --api-base URL"
        )
