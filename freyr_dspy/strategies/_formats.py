"""Values written in the form a tool's description shows.

A description that shows its values ("location, e.g. 'San Francisco, CA'", "24-hour time
HH:MM, e.g. '07:30'", "date as YYYY-MM-DD", "City and country e.g. Bogotá, Colombia") states
a form the tool expects; a small model writes the request's own form instead ("Tokyo" for a
city-and-region field, "6:45pm" for a 24-hour time, "42" for a message id) and the call fails,
or does the wrong thing silently. So a text value is compared with the forms its parameter's
description shows: it must carry every separator an example has (the comma of "City, Region",
the colon of "07:30", the dash of "msg-0042"), and where the example is digits alone (a time,
a date) no letters. Examples illustrate more than they define, so nothing else is asked: a
longer path, another file name, a name of more words all fit. A value that fits no example is
refused once with the form to follow, and the model writes it again; the same value written a
second time stands (the user may have meant it). A parameter that shows no form, or an enum,
is never checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from freyr_dspy.strategies._grounding import example_clauses
from freyr_dspy.tools import Tool

__all__ = ["fits", "misformed", "shown_forms", "unquoted_examples"]

#: Placeholders of a written format ("YYYY-MM-DD", "HH:MM"): each stands for digits.
_FORMAT = re.compile(
    r"\b(?:Y{2,4}|M{1,2}|D{1,2}|H{1,2}|h{1,2}|m{1,2}|s{1,2})(?:[-/:.T ]"
    r"(?:Y{2,4}|M{1,2}|D{1,2}|H{1,2}|h{1,2}|m{1,2}|s{1,2}))+\b"
)
#: Characters that carry no form: white space and the apostrophe of names ("O'Brien").
_PLAIN = re.compile(r"[\w\s']")


def fits(value: str, example: str) -> bool:
    """Whether ``value`` is written in the form ``example`` shows (see the module docstring)."""
    separators = set(_PLAIN.sub("", example))
    if not separators <= set(_PLAIN.sub("", value)):
        return False
    digits_only = any(c.isdigit() for c in example) and not any(c.isalpha() for c in example)
    return not (digits_only and any(c.isalpha() for c in value))


def shown_forms(tool: Tool) -> dict[str, tuple[str, ...]]:
    """Each text parameter's example values, and its written formats as example shapes."""
    forms: dict[str, tuple[str, ...]] = {}
    for parameter in tool.parameters:
        if parameter.enum or parameter.type != "string":
            continue
        schema = parameter.schema or {}
        shown = list(example_clauses(parameter.description)) or unquoted_examples(
            parameter.description
        )
        shown += [v for v in schema.get("examples") or () if isinstance(v, str)]
        shown += [_FORMAT_DIGITS.sub("0", f) for f in _FORMAT.findall(parameter.description)]
        if shown:
            forms[parameter.name] = tuple(dict.fromkeys(shown))
    return forms


_FORMAT_DIGITS = re.compile(r"[YMDHhms]")
#: An unquoted example clause: what follows "e.g." up to the end of its sentence or bracket.
_UNQUOTED = re.compile(
    r"(?:\be\.\s?g\.?|\bfor (?:example|instance))[,:]?\s*"
    r"(?P<shown>[^;()\n]+?)\s*(?:[.;)]\s|[.;)]?$)",
    re.IGNORECASE,
)


def unquoted_examples(description: str) -> list[str]:
    """Examples written without quotes: "e.g. Bogotá, Colombia" -> ``["Bogotá, Colombia"]``.

    Without quotes a comma may join the parts of one value or list several values. One comma
    is read as one value (a refusal it causes is a single extra call, and a value written
    twice stands); two or more commas, or "or", list values.
    """
    found = []
    for match in _UNQUOTED.finditer(description):
        shown = match.group("shown").strip()
        alternatives = re.split(r"\s+or\s+", shown)
        if len(alternatives) == 1 and shown.count(",") > 1:
            alternatives = shown.split(",")
        found += [a.strip() for a in alternatives if a.strip()]
    return found


def misformed(tool: Tool, arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (argument, example) pairs whose text is in none of the forms the parameter shows."""
    found = []
    for name, examples in shown_forms(tool).items():
        value = arguments.get(name)
        if not isinstance(value, str) or not value.strip():
            continue
        if not any(fits(value, example) for example in examples):
            found.append((name, examples[0]))
    return found
