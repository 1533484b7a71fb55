"""Tolerant parsers for what small models actually write.

Every parser accepts the typed value DSPy parsed *or* raw text from a failed parse, and
copes with case, spacing, bullets, quotes, code fences and stray prose around the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import json_repair

from freyr_dspy.tools import normalize_name

CONVERSATION = "conversation"

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s*")


def strip_fences(text: str) -> str:
    """Return the content of the first code fence, or the text itself."""
    match = _FENCE.search(text)
    return match.group(1).strip() if match else text.strip()


def split_items(value: Any) -> list[str]:
    """Split a list answer written as a JSON list, a comma/semicolon list or bullet lines."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [item for v in value for item in split_items(v)]
    if isinstance(value, dict):
        return split_items(list(value.values()))
    text = strip_fences(str(value))
    if text.startswith(("[", "{")):
        try:
            parsed = json_repair.loads(text)
        except (ValueError, TypeError):
            parsed = None
        if isinstance(parsed, list | dict) and parsed:
            return split_items(parsed)
    parts = re.split(r"[,;\n]|\band\b", text)
    items = [_BULLET.sub("", p).strip().strip("'\"`*[]().").strip() for p in parts]
    return [item for item in items if item]


def match_names(
    items: Iterable[str],
    known: Iterable[str],
    *,
    special: Iterable[str] = (CONVERSATION,),
    keep_repeats: bool = False,
) -> tuple[list[str], list[str]]:
    """Map written names to known names; return (matched, unknown) keeping first-seen order.

    A written item matches a known name when they are equal ignoring case, spaces,
    underscores, dashes and quotes, or when the item contains exactly one known name (a
    model that writes "call add_task now" meant ``add_task``). Repeated names are dropped
    unless ``keep_repeats`` (a plan may call one tool twice; a selected set may not).
    """
    table = {normalize_name(k): k for k in [*special, *known]}
    matched: list[str] = []
    unknown: list[str] = []
    for item in items:
        key = normalize_name(item)
        name = table.get(key) or _contained_name(key, table)
        if name is None:
            unknown.append(item)
        elif keep_repeats or name not in matched:
            matched.append(name)
    return matched, unknown


def _contained_name(key: str, table: dict[str, str]) -> str | None:
    hits = [name for k, name in table.items() if k and k in key]
    longest = max(hits, key=len, default=None)
    # Several unrelated hits are ambiguous; nested hits ("task" in "add_task") keep the longest.
    if longest and all(normalize_name(h) in normalize_name(longest) for h in hits):
        return longest
    return None


def parse_arguments(value: Any) -> dict[str, Any]:
    """Read tool arguments from a dict, a JSON object (even broken) or ``- name: value`` lines.

    Returns an empty dict when nothing argument-like is found; the tool's validation then
    reports precisely which arguments are missing.
    """
    if isinstance(value, dict):
        inner = value.get("arguments") if set(value) == {"arguments"} else None
        return parse_arguments(inner) if isinstance(inner, dict | str) else dict(value)
    text = strip_fences(str(value or ""))
    obj = _first_json_object(text)
    if obj is not None:
        return parse_arguments(obj)
    return _parse_bullets(text)


def _first_json_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    if start < 0:
        return None
    try:
        parsed = json_repair.loads(text[start:])
    except (ValueError, TypeError):
        return None
    return parsed if isinstance(parsed, dict) and parsed else None


def _parse_bullets(text: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for line in text.splitlines():
        match = re.match(r"^\s*(?:[-*•+]|\d+[.)])?\s*[`'\"]?(\w+)[`'\"]?\s*[:=]\s*(.+?)\s*$", line)
        if match:
            arguments[match.group(1)] = _scalar(match.group(2))
    return arguments


def _scalar(raw: str) -> Any:
    """Interpret one written value: JSON literal if it parses, else the unquoted string."""
    raw = raw.rstrip(",;")
    try:
        return json.loads(raw)
    except ValueError:
        return raw.strip("'\"`")


def parse_text(value: Any) -> str:
    """Read a free-text answer: unwrap fences, JSON ``{"reply": ...}`` and field markers."""
    text = str(value or "").strip()
    obj = _first_json_object(text) if text.startswith("{") else None
    if obj:
        text = str(next(iter(obj.values())))
    text = re.sub(r"\[\[\s*##\s*\w+\s*##\s*\]\]", "", text)
    return strip_fences(text).strip()
