"""The toolbox and row writer the dataset tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

WEATHER_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get-weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {
                        "type": "string",
                        "enum": ["celsius", "fahrenheit"],
                        "default": "celsius",
                    },
                    "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "tag_photos",
            "description": "Tag photos with labels.",
            "parameters": {
                "type": "object",
                "properties": {
                    "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                    "album": {"type": "string"},
                },
                "required": ["labels", "album"],
            },
        },
    },
]


def write_rows(path: Path, rows: list[Any]) -> Path:
    """Write rows as JSONL (strings are written as they are: for malformed lines)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
