"""A JSONL checkpoint of finished units, so an interrupted evaluation resumes where it stopped.

Line 1 is a header with the configuration's fingerprint; every further line is one finished
unit (``UnitResult.to_json``), written and flushed as soon as the unit ends. A process killed
mid-write leaves at most one broken last line: it is dropped with a warning and the unit is
run again. A checkpoint written by a different configuration is refused instead of mixing
results of different models or settings.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.evaluation._units import UnitKey, UnitResult

__all__ = ["Checkpoint"]

logger = logging.getLogger(__name__)

FORMAT = "freyr-eval-checkpoint"
VERSION = 1


class Checkpoint:
    """Finished units on disk; ``finished`` holds those found when it was opened.

    Use it as a context manager; ``append`` is thread-safe.

    Args:
        path: the JSONL file (created with its header when absent).
        fingerprint: ``EvalConfig.fingerprint()`` of the running evaluation.
        settings: the fingerprinted settings, stored in the header to explain a mismatch.
        restart: discard an existing file instead of resuming from it.
        read_only: only read the finished units (another process may still be writing the
            file): an incomplete last line is skipped, never cut off.

    Raises:
        ConfigError: when the file was written by a different configuration.
        DataError: when a line other than the last is corrupt.
    """

    def __init__(
        self,
        path: Path,
        fingerprint: str,
        settings: Mapping[str, Any],
        *,
        restart: bool = False,
        read_only: bool = False,
    ) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.settings = dict(settings)
        self.finished: dict[UnitKey, UnitResult] = {}
        self._lock = threading.Lock()
        self.read_only = read_only
        if read_only:
            if not path.exists():
                raise ConfigError(f"no checkpoint at {str(path)!r}: nothing has been evaluated yet")
            self._read()
            return
        if restart and path.exists():
            path.unlink()
        if path.exists():
            self._read()
        self._file: IO[str] = path.open("a", encoding="utf-8")
        if path.stat().st_size == 0:
            self._write(
                {
                    "format": FORMAT,
                    "version": VERSION,
                    "fingerprint": fingerprint,
                    "settings": self.settings,
                }
            )

    def append(self, unit: UnitResult) -> None:
        """Record a finished unit durably (flushed and synced before returning)."""
        if self.read_only:
            raise RuntimeError("a read-only checkpoint cannot record units")
        with self._lock:
            self._write({"fingerprint": self.fingerprint, **unit.to_json()})
            self.finished[unit.key] = unit

    def close(self) -> None:
        """Close the file."""
        if self.read_only:
            return
        with self._lock:
            self._file.close()

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _write(self, data: Mapping[str, Any]) -> None:
        self._file.write(json.dumps(data, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def _read(self) -> None:
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        last = max((i for i, line in enumerate(lines, start=1) if line.strip()), default=0)
        offset = 0
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    data = json.loads(line)
                    self._accept(data, number)
                except (ValueError, KeyError, TypeError) as exc:
                    if number != last:
                        raise DataError(
                            self.path,
                            number,
                            f"corrupt checkpoint line ({exc}); "
                            "fix or delete the file, or pass --restart",
                        ) from exc
                    if self.read_only:  # a unit still being written: not finished yet
                        return
                    logger.warning(
                        "%s:%d: ignoring an incomplete last line (the process was "
                        "probably killed while writing it)",
                        self.path,
                        number,
                    )
                    _truncate(self.path, offset)
                    return
            offset += len(line) + 1
        if raw and not raw.endswith(b"\n") and not self.read_only:
            _truncate(self.path, len(raw.rstrip(b"\n")))
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write("\n")

    def _accept(self, data: dict[str, Any], number: int) -> None:
        if data.get("format") == FORMAT:
            self._check_header(data)
            return
        if data.get("fingerprint") != self.fingerprint:
            raise self._mismatch(data.get("settings", {}))
        unit = UnitResult.from_json(data)
        self.finished[unit.key] = unit

    def _check_header(self, header: dict[str, Any]) -> None:
        if header.get("version") != VERSION:
            raise ConfigError(
                f"checkpoint {str(self.path)!r} has format version "
                f"{header.get('version')}, expected {VERSION}; pass --restart"
            )
        if header.get("fingerprint") != self.fingerprint:
            raise self._mismatch(header.get("settings", {}))

    def _mismatch(self, theirs: Mapping[str, Any]) -> ConfigError:
        keys = {*theirs, *self.settings}
        changed = sorted(k for k in keys if theirs.get(k) != self.settings.get(k))
        detail = f" (differs in: {', '.join(changed)})" if changed else ""
        return ConfigError(
            f"checkpoint {str(self.path)!r} was written by a different configuration{detail}; "
            "pass --restart to discard it, or write to another --out"
        )


def _truncate(path: Path, size: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(size)
