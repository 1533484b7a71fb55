"""Look things up before acting: the read-only tools that may give a value an action lacks.

"Unpin the vows draft" needs the note's id, which the user never says and only the notes
listing gives. Planned alone, the action's id is made up (Qwen 1.5B wrote ``note-1`` for
every note) or the call is not made. A call whose required value is stated nowhere, earlier
turns and results included, waits (``call_with_retries``); the program then calls the
toolbox's read-only tools (``Tool.read_only``: they change nothing) that may hold that value,
and writes the waiting call again with their results in view (``Freyr.more_rounds``).

Which reads: those whose name and description share words with the waiting tool and its
required parameters (``note_id`` of ``pin_note`` with "List the notes (id, title, ...)"),
those needing no value first, at most ``MOST_LOOKUPS``. A read that needs the very value
that is missing (``read_note(note_id)``) cannot give it and is left out, and so is one
already made in this request. A lookup never waits and gets one retry: it is a help to the
ask, not the ask.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._run import Run
from freyr_dspy.tools import Tool

__all__ = ["MOST_LOOKUPS", "lookup_policy", "lookups_for"]

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
    return dataclasses.replace(policy, max_retries=retries, split_calls=False)


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
