"""Read a tool's description and argument descriptions from a Google-style docstring."""

from __future__ import annotations

import re

__all__ = ["doc_summary", "parse_args_section"]


def doc_summary(doc: str) -> str:
    """Return the docstring without its Google-style sections."""
    head = re.split(r"\n\s*(Args|Arguments|Returns|Raises|Examples?):\s*\n", doc, maxsplit=1)[0]
    return " ".join(head.split())


def parse_args_section(doc: str) -> dict[str, str]:
    """Read ``name: description`` entries of a Google-style ``Args:`` section."""
    match = re.search(r"\n\s*(?:Args|Arguments):\s*\n(.*?)(?:\n\s*\n|\n\s*\w+:\s*\n|$)", doc, re.S)
    if not match:
        return {}
    result: dict[str, str] = {}
    current = None
    entry_indent = -1
    for line in match.group(1).splitlines():
        indent = len(line) - len(line.lstrip())
        entry = re.match(r"\s*(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
        # A line indented deeper than the entries continues the previous description.
        if entry and (current is None or indent <= entry_indent):
            current, entry_indent = entry.group(1), indent
            result[current] = entry.group(2).strip()
        elif current:
            result[current] = (result[current] + " " + line.strip()).strip()
    return result
