"""Which code a bench measured: the commit, marked ``+dirty`` when the tree has changes."""

from __future__ import annotations

import subprocess
from pathlib import Path


def code_version() -> str:
    """The commit measured, marked ``+dirty`` when the tree has changes (rows may differ)."""
    git = ["git", "-C", str(Path(__file__).resolve().parent.parent)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
