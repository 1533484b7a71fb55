"""``library``: the GeckOpt gate (Fore, Singh, Stamoulis 2024).

Before any tool is selected, the model names the libraries (groups of tools) the request
touches; the later roles then see only those tools. With a catalog of 50+ tools this is the
difference between a prompt that fits a small model's context and one that does not.

Per call, ``library_contract`` types the answer as names of the toolbox's libraries or ``none``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dspy

from freyr_dspy.prompting import Contract, match_names, names_schema, split_items
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._registry import register_role

__all__ = ["NO_LIBRARY", "Gate", "library_contract", "read_gate"]

#: What the gate answers when the message needs no tool at all.
NO_LIBRARY = "none"


class LibrarySignature(dspy.Signature):
    """Decide which tool libraries the user's latest message needs.

    Name every library whose tools could help, most relevant first. If the message needs
    no tool at all (a greeting, small talk, thanks), answer only `none`.
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    libraries: str = dspy.InputField(desc="the available libraries: name and what they cover")
    selected: list[str] = dspy.OutputField(
        desc="names of the libraries the message needs, or ['none'] when it needs no tool"
    )


@dataclass(frozen=True)
class Gate:
    """What the gate decided: the libraries it matched, and whether it said ``none``."""

    libraries: tuple[str, ...] = ()
    no_tool: bool = False
    unknown: tuple[str, ...] = ()


def read_gate(items: Any, known: Sequence[str]) -> Gate:
    """Match what the model wrote to the known library names.

    ``none`` counts only when no library was named next to it: a model that writes
    "billing, none" still asked for billing.

    Args:
        items: the ``selected`` output (a list or text).
        known: the library names of the toolbox.

    Returns:
        The matched libraries, the ``none`` flag and the names that matched nothing.
    """
    matched, unknown = match_names(split_items(items), known, special=(NO_LIBRARY,))
    libraries = tuple(name for name in matched if name != NO_LIBRARY)
    return Gate(libraries, no_tool=not libraries and NO_LIBRARY in matched, unknown=tuple(unknown))


def library_contract(libraries: Sequence[str]) -> Contract:
    """The gate's answer in one call: names of ``libraries`` or ``none``, each at most once."""
    names = [*libraries, NO_LIBRARY]
    return {"selected": names_schema(names, max_items=len(set(names)))}


class LibrarySelector(Role):
    """Pick the libraries a request needs (the gate of ``gated``)."""

    signature = LibrarySignature

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read library names from free text: commas, bullets, JSON lists."""
        return {"selected": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Split a comma/bullet list written into one item."""
        return {"selected": split_items(outputs.get("selected"))}


register_role("library", LibrarySelector)
