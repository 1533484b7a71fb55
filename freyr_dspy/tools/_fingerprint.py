"""Toolbox fingerprints: which tools a compiled program was built for, without their text.

An artifact compiled for a user's tools records one short hash per tool (of its description
and argument schema), not the descriptions themselves. Loading it against a toolbox compares
the two and names every tool added, removed or changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from freyr_dspy.tools._toolbox import Toolbox

__all__ = ["toolbox_changes", "toolbox_fingerprint"]


def toolbox_fingerprint(toolbox: Toolbox) -> dict[str, str]:
    """Tool name -> a 12-hex-digit hash of its description and argument schema."""
    fingerprint = {}
    for tool in toolbox:
        text = json.dumps(
            {"description": tool.description, "parameters": tool.json_schema()},
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        fingerprint[tool.name] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return fingerprint


def toolbox_changes(recorded: Mapping[str, str], toolbox: Toolbox) -> list[str]:
    """What differs between a recorded fingerprint and ``toolbox``: one phrase per kind.

    Returns:
        e.g. ``["missing: get-weather", "changed: set-alarm", "new: send-mail"]``; empty
        when the toolbox is the one recorded.
    """
    current = toolbox_fingerprint(toolbox)
    missing = [name for name in recorded if name not in current]
    changed = [n for n in recorded if n in current and current[n] != recorded[n]]
    new = [name for name in current if name not in recorded]
    groups = (("missing", missing), ("changed", changed), ("new", new))
    return [f"{label}: {', '.join(names)}" for label, names in groups if names]
