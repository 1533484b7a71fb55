"""What the bench scripts share: rows files, markdown tables, JSON output, medians, servers.

A script run as ``python scripts/bench_x.py`` has ``scripts/`` first on ``sys.path``, so
``import _bench`` finds this file with no path editing; the tests load the scripts the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from freyr_dspy.evaluation import code_version
from freyr_dspy.testing import stopped_at_exit


def add_out_options(parser: argparse.ArgumentParser, default: Path | None) -> None:
    """``--out`` (the rows file; required without a ``default``) and ``--report-only``."""
    parser.add_argument("--out", type=Path, default=default, required=default is None)
    parser.add_argument("--report-only", action="store_true", help="print the table of --out")


def load_rows(path: Path, *, missing_ok: bool = True) -> list[dict[str, Any]]:
    """The rows saved in ``path`` so far (a rerun skips them); none for a new file."""
    if missing_ok and not path.exists():
        return []
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return rows


def save_rows(path: Path, about: str, rows: list[dict[str, Any]]) -> None:
    """Write the rows with what was measured and the code that measured it, atomically."""
    save_json(path, {"about": about, "code": code_version(), "rows": rows}, indent=1)


def save_json(path: Path, data: Any, *, indent: int = 2) -> None:
    """Write ``data`` as JSON, creating the folder; a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(json.dumps(data, indent=indent, default=str) + "\n", encoding="utf-8")
    temp.replace(path)  # a rename: the old file stays whole until the new one is


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The lines of a markdown table: header, rule, one line per row."""
    lines = [_markdown_line(columns), "|" + "---|" * len(columns)]
    return lines + [_markdown_line(row) for row in rows]


def _markdown_line(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def median_or_nan(values: Iterable[float]) -> float:
    """The median, or NaN (shown as ``nan``) when there is nothing to take it of."""
    values = list(values)
    return statistics.median(values) if values else math.nan


def mean_or_nan(values: Iterable[float]) -> float:
    """The mean, or NaN (shown as ``nan``) when there is nothing to take it of."""
    values = list(values)
    return statistics.mean(values) if values else math.nan


@contextlib.contextmanager
def running_server(
    command: Sequence[str], log: Path, ready_url: str, *, label: str, startup_seconds: float
) -> Iterator[None]:
    """Run a server ``command`` (output to ``log``) until ``ready_url`` answers 200; always stop it.

    Raises:
        SystemExit: when the server exits or does not answer within ``startup_seconds``.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(list(command), stdout=sink, stderr=subprocess.STDOUT)
    with stopped_at_exit(process, grace=20):
        _wait_ready(process, log, ready_url, label, startup_seconds)
        yield


def _wait_ready(
    process: subprocess.Popen[bytes], log: Path, url: str, label: str, seconds: float
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise SystemExit(f"{label} exited:\n{tail}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise SystemExit(f"{label} did not start within {seconds:g} s (log: {log})")
