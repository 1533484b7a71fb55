"""Tolerant parsers for what small models actually write.

Every parser accepts the typed value DSPy parsed *or* raw text from a failed parse, and
copes with case, spacing, bullets, quotes, code fences and stray prose around the answer.
No parser raises on what a model wrote: JSON is read only through ``load_json``, and JSON
text found inside parsed JSON is parsed again only ``MAX_NESTED_JSON`` times.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import json_repair

from freyr_dspy.tools import normalize_name

__all__ = [
    "CONVERSATION",
    "MAX_NESTED_JSON",
    "bracket_depth",
    "load_json",
    "match_names",
    "parse_arguments",
    "parse_text",
    "split_items",
    "strip_fences",
    "valid_strings",
    "valid_unicode",
]

CONVERSATION = "conversation"

#: Deepest bracket nesting ``load_json`` reads. Real answers nest a few levels; hundreds of
#: brackets are junk that exhausts the recursion of JSON parsers and of the code walking the
#: result. Brackets inside strings count too: the cap errs on the side of not parsing.
MAX_JSON_DEPTH = 32
#: How many times JSON text found inside parsed JSON is parsed again (``{"arguments":
#: "{\"title\": ...}"}``): each level re-scans the text, so junk must not go on for ever.
MAX_NESTED_JSON = 2

# NOTE: possessive quantifiers keep the regexes linear on long runs of one character.
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*+\s*+(.*?)```", re.S)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s*")
_NOT_JSON = object()
_BRACKETS = re.compile(r"[][{}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ARGUMENT_LINE = re.compile(
    r"^\s*+(?:[-*•+]|\d++[.)])?\s*+[`'\"]?(\w++)[`'\"]?\s*+[:=]\s*+(.*\S)\s*$"
)


def load_json(
    text: str,
    *,
    repair: bool = True,
    max_depth: int | None = MAX_JSON_DEPTH,
    default: Any = None,
) -> Any:
    """Read JSON a model wrote, repairing it unless ``repair`` is False; never raise.

    Args:
        text: the JSON text (broken JSON too, when repairing).
        repair: parse with ``json_repair`` (tolerant) rather than strict ``json``.
        max_depth: deepest bracket nesting to parse at all (None: no limit besides the
            parser's own recursion limit).
        default: what to return when the text cannot be read.

    Returns:
        The parsed value; ``default`` when the text nests deeper than ``max_depth`` or the
        parser fails (``json_repair`` itself returns ``""`` for text it cannot repair).
    """
    if max_depth is not None and bracket_depth(text) > max_depth:
        return default
    try:
        return valid_strings(json_repair.loads(text), default) if repair else json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return default


def valid_strings(value: Any, default: Any = None) -> Any:
    """Return a JSON value with every string made valid Unicode (see ``valid_unicode``).

    Args:
        value: a JSON value (what a JSON parser returned).
        default: what to return when ``value`` cannot be written as JSON (nested too deep).

    Returns:
        ``value`` itself when all its text is valid, else a repaired copy.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return default
    if not _SURROGATE.search(text):
        return value
    return load_json(valid_unicode(text), repair=False, max_depth=None, default=default)


def valid_unicode(text: str) -> str:
    r"""Join surrogate pairs and replace lone surrogates with U+FFFD.

    ``json_repair`` decodes an escaped emoji (``"\ud83d\ude00"``) in broken JSON into two
    lone surrogates, and a model may write half a pair; DSPy refuses to send such text to any
    model (``ValueError``), so it must not reach a later prompt.
    """
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def bracket_depth(text: str) -> int:
    """Return the deepest nesting of ``[``/``{`` in ``text``, ignoring JSON string syntax."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(text):
        depth = depth + 1 if bracket in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def strip_fences(text: str) -> str:
    """Return the content of the first code fence, or the text itself."""
    match = _FENCE.search(text)
    return match.group(1).strip() if match else text.strip()


def split_items(value: Any) -> list[str]:
    """Split a list answer written as a JSON list, a comma/semicolon list or bullet lines."""
    return _split_items(value, nested=0)


def _split_items(value: Any, *, nested: int) -> list[str]:
    """``nested`` counts the JSON texts parsed on the way to ``value``."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [item for v in value for item in _split_items(v, nested=nested)]
    if isinstance(value, dict):
        return _split_items(list(value.values()), nested=nested)
    text = strip_fences(str(value))
    if nested <= MAX_NESTED_JSON and text.startswith(("[", "{")):
        parsed = load_json(text)
        if isinstance(parsed, list | dict) and parsed:
            return _split_items(parsed, nested=nested + 1)
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
    return _parse_arguments(value, nested=0)


def _parse_arguments(value: Any, *, nested: int) -> dict[str, Any]:
    """``nested`` counts the JSON texts parsed on the way to ``value``."""
    if isinstance(value, dict):
        inner = value.get("arguments") if set(value) == {"arguments"} else None
        if isinstance(inner, dict | str):
            return _parse_arguments(inner, nested=nested)
        return dict(value)
    text = strip_fences(str(value or ""))
    obj = _first_json_object(text) if nested <= MAX_NESTED_JSON else None
    if obj is not None:
        return _parse_arguments(obj, nested=nested + 1)
    return _parse_bullets(text)


def _first_json_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    if start < 0:
        return None
    parsed = load_json(text[start:])
    return parsed if isinstance(parsed, dict) and parsed else None


def _parse_bullets(text: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for line in text.splitlines():
        match = _ARGUMENT_LINE.match(line)
        if match:
            arguments[match.group(1)] = _scalar(match.group(2))
    return arguments


def _scalar(raw: str) -> Any:
    """Interpret one written value: JSON literal if it parses, else the unquoted string."""
    raw = raw.rstrip(",;")
    value = load_json(raw, repair=False, default=_NOT_JSON)
    return raw.strip("'\"`") if value is _NOT_JSON else value


def parse_text(value: Any) -> str:
    """Read a free-text answer: unwrap fences, JSON ``{"reply": ...}`` and field markers."""
    text = str(value or "").strip()
    obj = _first_json_object(text) if text.startswith("{") else None
    if obj:
        text = str(next(iter(obj.values())))
    text = re.sub(r"\[\[\s*##\s*\w+\s*##\s*\]\]", "", text)
    return strip_fences(text).strip()
