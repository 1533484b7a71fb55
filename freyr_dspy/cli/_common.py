"""Options and helpers shared by the commands."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from freyr_dspy.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def option_group(*options: Callable[[Any], Any]) -> Callable[[F], F]:
    """One decorator adding ``options`` (``click.option(...)``s), listed in ``--help`` as given.

    Every command declares its options this way: a named group per topic, shared ones here
    (``model_options``), a command's own beside it (``_eval_options``), so a command's
    decorators read as the list of what it takes.
    """

    def apply(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


#: ``--model``, ``--sampling`` and ``--api-base``: which model plays each role, and how.
model_options = option_group(
    click.option(
        "--model",
        "model_specs",
        multiple=True,
        metavar="[ROLE=]ID",
        help="Model per role (ROLE=ID) or for every role (ID). Repeatable.",
    ),
    click.option(
        "--sampling",
        "sampling_specs",
        multiple=True,
        metavar="[ROLE.]PARAM=VALUE",
        help="Sampling per role: temperature, top_p, top_k, max_tokens, seed. Repeatable.",
    ),
    click.option(
        "--api-base", default=None, help="Server URL for remote/OpenAI-compatible models."
    ),
)

#: ``--json``: machine-readable output on stdout.
json_option = option_group(click.option("--json", "as_json", is_flag=True, help="Print JSON."))

#: Where the built-in benchmarks' data is (``Settings.resolve_data_dir`` falls back the same way).
data_option = option_group(
    click.option(
        "--data",
        "data_dir",
        type=click.Path(path_type=Path),
        help="Benchmark data directory (default: $FREYR_DATA_DIR, else ../shared/benchmarks).",
    )
)


def make_settings(**overrides: Any) -> Settings:
    """Settings from the environment with CLI values on top."""
    return Settings.from_env(os.environ, **overrides)


def echo_json(data: Any) -> None:
    """Print JSON data on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def read_json_file(path: Path) -> Any:
    """Read a JSON file, turning syntax errors into a one-line ``DataError``."""
    from freyr_dspy.errors import DataError

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except OSError as exc:
        raise DataError(path, None, f"cannot read: {exc.strerror}") from exc


#: Seconds between two progress lines when stderr is a log file rather than a terminal.
PROGRESS_LINE_SECONDS = 300.0


class ProgressLines:
    """A ``(done, total)`` callback writing a plain line now and then: for a run's log file.

    A long evaluation started in the background (``nohup freyr eval ... &``) has no terminal
    for a bar; its log gets a line at the start, one every ``every`` seconds, and one at the
    end, each with the count, the time this process has run and the time left at its pace.
    A count that goes down starts a new pass (compile scores the dev set twice).
    """

    def __init__(
        self,
        desc: str,
        unit: str,
        *,
        every: float = PROGRESS_LINE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[str], None] | None = None,
    ) -> None:
        self.desc, self.unit, self.every, self.clock = desc, unit, every, clock
        self.write = write or (lambda line: click.echo(line, err=True))
        self.pass_started_at: float | None = None  # when the current pass began
        self.pass_started_done = 0  # its count then (a resumed run starts above 0)
        self.last_line = -math.inf
        self.last_done = 0

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        new_pass = self.pass_started_at is None or done < self.last_done
        self.last_done = done
        if new_pass:
            self.pass_started_at, self.pass_started_done = now, done
        elif done < total and now - self.last_line < self.every:
            return
        self.last_line = now
        self.write(self.line(done, total, now))

    def line(self, done: int, total: int, now: float) -> str:
        """``eval: 30 of 750 units, 10 min in this run, ~4 h 0 min left``."""
        since = now if self.pass_started_at is None else self.pass_started_at
        text = f"{self.desc}: {done} of {total} {self.unit}s"
        if done >= total:
            return f"{text}, done in {_duration(now - since)}"
        ran = done - self.pass_started_done
        if not ran:
            return text
        left = (total - done) * (now - since) / ran
        return f"{text}, {_duration(now - since)} in this run, ~{_duration(left)} left"


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


@contextmanager
def progress_bar(desc: str, *, unit: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a ``(done, total)`` callback: a bar on a terminal, else ``ProgressLines``."""
    if not sys.stderr.isatty():
        yield ProgressLines(desc, unit)
        return
    from tqdm import tqdm

    bar = tqdm(total=0, unit=unit, file=sys.stderr, dynamic_ncols=True, desc=desc)

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
