"""Benchmark names held by position: ``{{name:N}}`` stands for the N-th name of a catalog.

Tool, API and parameter names come from a benchmark's data files, which the project must not
copy. The files it commits that need those names - trainset labels and the demos of compiled
programs - refer to them by position in the catalog the data directory provides
(``{{name:3}}``), and get them back when they are read with that data at hand. A fingerprint
of the name list, kept beside the references, tells a changed catalog from the one the file
was written against.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "REFERENCE",
    "fill_names",
    "fill_names_in_json",
    "fingerprint",
    "map_strings",
    "refer_names",
]

#: A reference: ``{{name:12}}`` is the name at position 12.
REFERENCE = re.compile(r"\{\{name:(\d+)\}\}")


def refer_names(text: str, names: Sequence[str]) -> str:
    """Replace every whole-word occurrence of a name in ``text`` by its reference.

    Longer names are tried first, so ``Sage Company Info`` is one reference rather than
    ``Sage`` followed by text. Matching is case-sensitive: the names are identifiers.

    Raises:
        ValueError: when ``text`` already holds something that reads as a reference, which
            could not be told from one afterwards.
    """
    if REFERENCE.search(text):
        raise ValueError(f"text already holds a name reference: {text[:80]!r}")
    matcher = _matcher(tuple(names))
    if matcher is None:
        return text
    pattern, position = matcher
    return pattern.sub(lambda m: f"{{{{name:{position[m.group(0)]}}}}}", text)


def fill_names(text: str, names: Sequence[str]) -> str:
    """Replace every reference in ``text`` by the name at its position.

    Raises:
        ValueError: for a position the name list does not have.
    """

    def name_at(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(names):
            raise ValueError(
                f"{match.group(0)} refers past the catalog's {len(names)} names; "
                "was it written against other data?"
            )
        return names[index]

    return REFERENCE.sub(name_at, text)


def fill_names_in_json(line: str, names: Sequence[str]) -> str:
    """``fill_names`` on a line of JSON: each name is escaped as JSON string content.

    References sit inside JSON strings (keys and values alike), so a name with a quote or a
    backslash must not end the string it lands in.

    Raises:
        ValueError: for a position the name list does not have.
    """
    return fill_names(line, [json.dumps(name)[1:-1] for name in names])


def fingerprint(names: Sequence[str]) -> str:
    """A short hash of the name list, order included (positions are what references keep)."""
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:16]


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A copy of a JSON-like ``value`` with ``change`` applied to every string and dict key."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {
            change(k) if isinstance(k, str) else k: map_strings(v, change) for k, v in value.items()
        }
    if isinstance(value, list):
        return [map_strings(v, change) for v in value]
    return value


@functools.lru_cache(maxsize=8)  # an artifact refers every string of its state to one list
def _matcher(names: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, int]] | None:
    """A pattern of the names, longest first, and each name's first position."""
    # Word boundaries by hand: a name may start or end with a non-word character.
    usable = sorted({n for n in names if n}, key=len, reverse=True)
    if not usable:
        return None
    alternatives = "|".join(re.escape(n) for n in usable)
    position = {name: i for i, name in reversed(list(enumerate(names)))}
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)"), position
