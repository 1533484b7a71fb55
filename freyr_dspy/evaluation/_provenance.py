"""Which code produced a result: the commit of freyr's source tree, ``+dirty`` when it has changes.

An eval ``--out`` file does not record the commit it ran on; the committed summaries
(``freyr eval export``), comparisons (``freyr eval compare``) and the bench scripts' rows do.
``source_digest`` names the package's code by its content instead: what a cached result
depends on, unchanged by commits that touch only docs, tests or data.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

__all__ = ["code_version", "source_digest"]

#: What ``code_version`` says outside a git checkout (an installed package, no git).
UNKNOWN_CODE = "unknown"


def code_version(source: Path | None = None) -> str:
    """The commit of the checkout holding ``source``, ``+dirty`` when the tree has changes.

    Args:
        source: a folder inside the checkout (default: this package's own source, so the
            answer names the code that ran, whatever the working directory).

    Returns:
        ``abc1234`` or ``abc1234+dirty``; ``unknown`` when ``source`` is in no git checkout.
    """
    # NOTE: the package's own folder, not the working directory: the code that ran is asked.
    folder = source or Path(__file__).resolve().parent
    commit = _git(folder, "rev-parse", "--short", "HEAD")
    if not commit:
        return UNKNOWN_CODE
    return commit + ("+dirty" if _git(folder, "status", "--porcelain") else "")


def _git(folder: Path, *args: str) -> str:
    """The stripped output of a read-only git command, or ``""`` when it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False
        )
    except OSError:  # no git on this machine
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.cache
def source_digest() -> str:
    """A hash of every Python file of the installed ``freyr_dspy`` package (paths and contents)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
