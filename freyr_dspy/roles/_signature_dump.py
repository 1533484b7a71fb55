"""``dump_signature``: a role's contract (instructions + typed fields) as reviewable data.

DSPy's ``Signature.dump_state()`` leaves out field names and types, so freyr writes its own
dump. ``signatures/<role>.json`` holds these dumps; a test keeps them in step with the code,
and compiled artifacts record their hashes so a changed contract is caught at load time.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import dspy

__all__ = ["dump_signature", "signature_hash", "write_signature_dumps"]


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if not hasattr(annotation, "__args__") else None
    return text or str(annotation).replace("typing.", "")


def dump_signature(signature: type[dspy.Signature]) -> dict[str, Any]:
    """Return the instructions and every field's name, direction, type and description."""
    fields = []
    for direction, group in (
        ("input", signature.input_fields),
        ("output", signature.output_fields),
    ):
        for name, info in group.items():
            extra = info.json_schema_extra or {}
            fields.append(
                {
                    "name": name,
                    "direction": direction,
                    "type": _type_name(info.annotation),
                    "desc": extra.get("desc", ""),
                }
            )
    return {
        "signature": signature.__name__,
        "instructions": signature.instructions,
        "fields": fields,
    }


def signature_hash(signature: type[dspy.Signature]) -> str:
    """A short stable hash of ``dump_signature`` output."""
    text = json.dumps(dump_signature(signature), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def write_signature_dumps(directory: Path) -> list[Path]:
    """Write ``<role>.json`` for every registered role; return the paths written."""
    from freyr_dspy.roles._registry import load_roles

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for role, module in sorted(load_roles().items()):
        path = directory / f"{role}.json"
        path.write_text(
            json.dumps(dump_signature(module.signature), indent=2) + "\n", encoding="utf-8"
        )
        written.append(path)
    return written
