"""What ``freyr compile`` shows while it works: rows done, the candidate, the best, time left.

On a terminal, one tqdm bar over every row the compile plans to score (the plan grows as the
stages propose candidates), its description the stage and trial being scored, its postfix the
best score so far, with tqdm's own rate and ETA. Without a terminal (a log file, CI), a plain
line each time a new candidate starts and every ``PROGRESS_LINE_SECONDS`` in between, with
the same facts, so a long compile never looks hung.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from freyr_dspy.compiling import ProgressEvent

__all__ = ["compile_progress", "progress_line"]

#: Seconds between two plain progress lines of the same candidate.
PROGRESS_LINE_SECONDS = 60.0


def progress_line(event: ProgressEvent, elapsed: float) -> str:
    """``compile: 45 of 210 rows; baseline trial 0 (freyr+...); best 0.620 (trial 0); ...``."""
    best = "" if event.best is None else f"; best {event.best:.3f} (trial {event.best_trial})"
    left = ""
    if 0 < event.done < event.planned:
        left = f", ~{_minutes(elapsed * (event.planned - event.done) / event.done)} left"
    return (
        f"compile: {event.done} of {event.planned} rows; {event.stage} trial {event.trial} "
        f"({event.description}){best}; {_minutes(elapsed)} in{left}"
    )


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


@contextmanager
def compile_progress(
    *, tty: bool | None = None, write: Callable[[str], None] | None = None
) -> Iterator[Callable[[ProgressEvent], None]]:
    """Yield the callback that shows a compile's progress (see the module docstring)."""
    if sys.stderr.isatty() if tty is None else tty:
        with _bar() as show:
            yield show
        return
    yield _Lines(write or (lambda line: click.echo(line, err=True)))


@contextmanager
def _bar() -> Iterator[Callable[[ProgressEvent], None]]:
    from tqdm import tqdm

    bar = tqdm(total=0, unit="row", file=sys.stderr, dynamic_ncols=True, desc="compile")

    def show(event: ProgressEvent) -> None:
        bar.total = event.planned
        bar.n = event.done
        bar.set_description(f"{event.stage} trial {event.trial}", refresh=False)
        if event.best is not None:
            bar.set_postfix_str(f"best {event.best:.3f} (trial {event.best_trial})", refresh=False)
        bar.refresh()

    try:
        yield show
    finally:
        bar.close()


class _Lines:
    """Plain progress lines: one per new candidate, and one every so often in between."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.started = time.monotonic()
        self.last_line = -float("inf")
        self.trial: int | None = None

    def __call__(self, event: ProgressEvent) -> None:
        now = time.monotonic()
        if event.trial == self.trial and now - self.last_line < PROGRESS_LINE_SECONDS:
            return
        self.trial, self.last_line = event.trial, now
        self.write(progress_line(event, now - self.started))
