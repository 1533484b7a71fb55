"""A file cache of evaluations, keyed by the canonical configuration and what it was run on.

One JSON file per key, written to a temporary file and renamed, so worker processes that
share the directory never see a half-written entry and need no lock. Only successful
evaluations are stored: a failure may be transient (a server that was down) and must be
retried by a later trial.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from freyr_dspy._files import write_text_atomic

__all__ = ["EvaluationCache"]

logger = logging.getLogger(__name__)


class EvaluationCache:
    """Evaluations by key; a cache without a directory stores nothing.

    Args:
        directory: where the entries live (created on first write), or None to disable.
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(**parts: Any) -> str:
        """Hash JSON-ready ``parts`` (configuration, benchmark, episodes, version) into a key."""
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored evaluation, or None (unreadable entries count as missing)."""
        path = self._path(key)
        if path is None or not path.is_file():
            self.misses += 1
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            logger.warning("ignoring unreadable cache entry %s: %s", path, exc)
            self.misses += 1
            return None
        self.hits += 1
        evaluation: dict[str, Any] = entry["evaluation"]
        return evaluation

    def put(self, key: str, evaluation: dict[str, Any], **context: Any) -> None:
        """Store an evaluation (with its context, for a person reading the file)."""
        path = self._path(key)
        if path is None:
            return
        data = json.dumps({"evaluation": evaluation, "context": context}, indent=1, default=str)
        write_text_atomic(path, data)

    def _path(self, key: str) -> Path | None:
        return None if self.directory is None else self.directory / key[:2] / f"{key}.json"
