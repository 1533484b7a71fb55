"""Lossless JSON load/save of levels in the benchmark's file layout.

``dumps_level`` writes exactly the text of the benchmark files (two-space indent, arrays of
numbers such as coordinates on one line, floats always with a decimal point, a final
newline), so ``dumps_level(read_level(p)) == p.read_text()`` for every shipped file and a
saved level diffs cleanly against its source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.errors import DataError

__all__ = ["dumps_level", "load_level", "read_level", "write_level"]


def load_level(data: Any, *, source: str = "<level>", line: int | None = None) -> Level:
    """Validate level data (the parsed JSON of a level file).

    Args:
        data: the parsed JSON document, or a ``Level`` (returned as is).
        source: where the data came from, for error messages.
        line: the line of ``source`` the data starts on, when known.

    Raises:
        DataError: naming the source and every invalid field.
    """
    if isinstance(data, Level):
        return data
    try:
        return Level.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'level'}: {err['msg']}"
            for err in exc.errors()
        )
        raise DataError(source, line, f"invalid level: {problems}") from exc


def read_level(path: str | Path) -> Level:
    """Read a level file.

    Raises:
        DataError: for a missing file, invalid JSON (with its line) or an invalid level.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(path, None, f"cannot read level file: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    return load_level(data, source=str(path))


def dumps_level(level: Level) -> str:
    """Return the level as file text, byte-identical to the benchmark's own files."""
    return _encode(level.model_dump(mode="json"), 0) + "\n"


def write_level(level: Level, path: str | Path) -> None:
    """Write a level file (to a temporary name first, so a crash never leaves half a file)."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(dumps_level(level), encoding="utf-8")
    temporary.replace(path)


def _encode(value: Any, depth: int) -> str:
    """JSON with two-space indentation, keeping arrays of scalars on one line."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_encode(v, depth + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if not any(isinstance(v, dict | list) for v in value):
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
        items = [inner + _encode(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)
