"""Write files so that a crash or Ctrl-C never leaves half of one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temp file beside ``path``, flush it to disk, then rename it over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, _mode_for(path))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _read_umask() -> int:
    # os.umask can only be read by setting it; done once, at import, before any thread writes.
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_NEW_FILE_MODE = 0o666 & ~_read_umask()


def _mode_for(path: Path) -> int:
    """The file's present mode, else what ``open()`` would give: mkstemp's 0600 hid artifacts."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return _NEW_FILE_MODE
