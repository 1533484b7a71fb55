"""Look things up before acting: the read-only tools that may give a value an action lacks.

"Unpin the vows draft" needs the note's id, which the user never says and only the notes
listing gives. Planned alone, the action's id is made up (Qwen 1.5B wrote ``note-1`` for
every note) or the call is not made. A call whose required value is stated nowhere, earlier
turns and results included, waits (``call_with_retries``); the program then calls the
toolbox's read-only tools (``Tool.read_only``: they change nothing) that may hold that value,
and writes the waiting call again with their results in view (``Freyr.more_rounds``). A
name written where the id belongs ("running-plan" for the note titled "Running plan", which
Qwen 1.5B wrote even with the listing in view) is replaced by the id of the one record the
reads returned under that name (``resolved_ids``).

Which reads: those whose name and description share words with the waiting tool and its
required parameters (``note_id`` of ``pin_note`` with "List the notes (id, title, ...)"),
those needing no value first, at most ``MOST_LOOKUPS``. A read that needs the very value
that is missing (``read_note(note_id)``) cannot give it and is left out, and so is one
already made in this request. A lookup never waits and gets one retry: it is a help to the
ask, not the ask.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from freyr_dspy.schemas import CallRecord
from freyr_dspy.strategies._grounding import IDENTIFIER
from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._run import Run
from freyr_dspy.tools import Tool

__all__ = ["MOST_LOOKUPS", "lookup_policy", "lookups_for", "resolved_ids"]

#: Read-only tools called for one round of waiting calls, at most.
MOST_LOOKUPS = 2
#: Retries of a lookup whose arguments failed: a read is a help, not the ask.
LOOKUP_RETRIES = 1

_WORD = re.compile(r"[a-z0-9]+")
_COMMON = frozenset(
    "a an and any as at be by e eg for from g in is it its of on one or the this to with"
    " all each new id".split()
)


def lookups_for(run: Run, waiting: Sequence[str]) -> list[Tool]:
    """The read-only tools worth calling for the ``waiting`` calls, best first."""
    if not any(tool.read_only for tool in run.toolbox):
        return []  # asked before every call: most toolboxes have no reads
    made = {call.tool for call in run.calls}
    wanted = [run.toolbox.get(name) for name in dict.fromkeys(waiting)]
    needed = {p.name for tool in wanted for p in tool.parameters if p.required}
    words = set().union(*(_words_of(tool) for tool in wanted))
    scored = []
    for tool in run.toolbox:
        if not tool.read_only or tool.name in made or tool.name in waiting:
            continue
        if needed & {p.name for p in tool.parameters if p.required}:
            continue  # it needs the very value that is missing
        shared = len(words & _words(f"{tool.name} {tool.description}"))
        if shared:
            scored.append((-shared, _required_count(tool), tool.name, tool))
    return [tool for *_, tool in sorted(scored, key=lambda s: s[:3])[:MOST_LOOKUPS]]


def lookup_policy(policy: CallPolicy) -> CallPolicy:
    """``policy`` for lookups: one retry at most, one call per read."""
    retries = min(policy.max_retries, LOOKUP_RETRIES)
    return dataclasses.replace(policy, max_retries=retries, split_calls=False, split_listed=False)


def resolved_ids(
    tool: Tool, arguments: Mapping[str, Any], calls: Sequence[CallRecord]
) -> dict[str, Any]:
    """``arguments`` with a name written for an id replaced by that record's id.

    For a required text parameter whose value is no id the calls that succeeded returned
    (the reads among them, mostly): the records they returned whose id field fits the
    parameter (``id`` for ``note_id``, ``sku`` for ``sku``) and another field holds every word
    of the value ("Running plan" for ``running-plan``, "Tax documents 2026" for
    ``tax-documents``); exactly one such record gives its id. Before that, a value holding one
    returned id inside it is cut to that id (``_ids_inside``).
    """
    resolved = _ids_inside(tool, arguments, calls)
    records = [r for call in calls if _succeeded(call) for r in _records(_returned(call))]
    if not records:
        return resolved
    for parameter in tool.parameters:
        value = resolved.get(parameter.name)
        if not parameter.required or not isinstance(value, str) or not value.strip():
            continue
        keyed = [(r, key) for r in records if (key := _id_key(r, parameter.name)) is not None]
        if value in (r[key] for r, key in keyed):
            continue
        named = set(_plain(value).split())
        matches = {
            r[key]
            for r, key in keyed
            if any(_names(v, named) for k, v in r.items() if k != key and isinstance(v, str))
        }
        if len(matches) == 1:
            resolved[parameter.name] = matches.pop()
    return resolved


def _ids_inside(
    tool: Tool, arguments: Mapping[str, Any], calls: Sequence[CallRecord]
) -> dict[str, Any]:
    """``arguments`` with an id parameter's value cut to the one id a result gave inside it.

    Told "created note-4", Qwen 1.5B wrote ``note_id="created note-4"`` (and once
    ``"created_note-4"``) for the note it had just made. For a required parameter named as an
    id (``note_id``, ``sku``), a value that is no id a successful call returned, but holds
    exactly one such id as a whole token, becomes that id.
    """
    given = {
        token
        for call in calls
        if _succeeded(call)
        for token in IDENTIFIER.findall(call.outcome.message)
    }
    resolved = dict(arguments)
    if not given:
        return resolved
    for parameter in tool.parameters:
        value = arguments.get(parameter.name)
        if not (parameter.required and _names_an_id(parameter.name)) or not isinstance(value, str):
            continue
        if value in given:
            continue
        inside = [
            t for t in given if re.search(rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])", value)
        ]
        if len(inside) == 1:
            resolved[parameter.name] = inside[0]
    return resolved


def _names_an_id(parameter: str) -> bool:
    """Whether a parameter's name says it takes an id (``note_id``, ``noteId``, ``sku``)."""
    return parameter.lower().endswith("id") or parameter.lower() == "sku"


def _names(field: str, words: set[str]) -> bool:
    """Whether ``words`` name ``field``: all are its words ("tax documents" of "Tax documents")."""
    return bool(words) and words <= set(_plain(field).split())


def _succeeded(call: CallRecord) -> bool:
    return call.outcome.ok and not call.never_made


def _returned(call: CallRecord) -> Any:
    if call.outcome.data is not None:
        return call.outcome.data
    try:
        return json.loads(call.outcome.message)
    except ValueError:
        return None


def _records(value: Any) -> Iterator[Mapping[str, Any]]:
    """Every JSON object in ``value``, nested ones included."""
    if isinstance(value, Mapping):
        yield value
        for item in value.values():
            yield from _records(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _records(item)


def _id_key(record: Mapping[str, Any], parameter: str) -> str | None:
    """The key of ``record`` that holds what ``parameter`` names (``id`` for ``note_id``)."""
    for key in (parameter, "id"):
        if isinstance(record.get(key), str) and (key == parameter or parameter.endswith("id")):
            return key
    return None


def _plain(text: str) -> str:
    return " ".join(_WORD.findall(text.replace("_", " ").lower()))


def _words_of(tool: Tool) -> set[str]:
    """The words of a tool's name, description and required parameters."""
    required = " ".join(f"{p.name} {p.description}" for p in tool.parameters if p.required)
    return _words(f"{tool.name} {tool.description} {required}")


def _words(text: str) -> set[str]:
    """Lower-case words of ``text``, plurals folded, common words left out."""
    words = set()
    for word in _WORD.findall(text.replace("_", " ").lower()):
        if word in _COMMON or word.isdigit():
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words - _COMMON


def _required_count(tool: Tool) -> int:
    return sum(1 for p in tool.parameters if p.required)
