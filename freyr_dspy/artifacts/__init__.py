"""Compiled programs on disk: save, load, and what an artifact records.

``io`` reads and writes the files (``save``, ``load``, ``read_artifact``), ``meta`` is what
an artifact says about its program (``ArtifactMeta``: versions, spec, models, scores),
``rebuild`` makes the program an artifact describes, ``migrate`` reads the artifacts of
earlier versions as they ran then, and ``resume`` loads one to compile further
(``freyr compile --start``).
"""

from __future__ import annotations

from freyr_dspy.artifacts._io import load, program_state, read_artifact, resolve_path, save
from freyr_dspy.artifacts._meta import (
    FORMAT,
    FORMAT_VERSION,
    ArtifactMeta,
    ArtifactScores,
    build_meta,
    freyr_version,
    role_signature_hashes,
)
from freyr_dspy.artifacts._migrate import migrate_state_keys
from freyr_dspy.artifacts._rebuild import ModelsArg, benchmark_data_dir
from freyr_dspy.artifacts._resume import StartingPoint, starting_point
from freyr_dspy.program import ProgramSpec

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ArtifactMeta",
    "ArtifactScores",
    "ModelsArg",
    "ProgramSpec",
    "StartingPoint",
    "benchmark_data_dir",
    "build_meta",
    "freyr_version",
    "load",
    "migrate_state_keys",
    "program_state",
    "read_artifact",
    "resolve_path",
    "role_signature_hashes",
    "save",
    "starting_point",
]
