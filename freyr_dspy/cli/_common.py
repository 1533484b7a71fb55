"""Options and helpers shared by the commands."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from freyr_dspy.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def model_options(func: F) -> F:
    """Add ``--model``, ``--sampling`` and ``--api-base``."""
    func = click.option(
        "--api-base", default=None, help="Server URL for remote/OpenAI-compatible models."
    )(func)
    func = click.option(
        "--sampling",
        "sampling_specs",
        multiple=True,
        metavar="[ROLE.]PARAM=VALUE",
        help="Sampling per role: temperature, top_p, top_k, max_tokens, seed. Repeatable.",
    )(func)
    func = click.option(
        "--model",
        "model_specs",
        multiple=True,
        metavar="[ROLE=]ID",
        help="Model per role (ROLE=ID) or for every role (ID). Repeatable.",
    )(func)
    return func


def json_option(func: F) -> F:
    """Add ``--json`` (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


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


@contextmanager
def progress_bar(desc: str, *, unit: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a ``(done, total)`` callback drawing a bar on stderr; None when it is no terminal."""
    if not sys.stderr.isatty():
        yield None
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
