"""What an artifact says about its program: the format, ``ArtifactMeta`` and the version check.

``meta`` says how to rebuild the program (domain, strategy, options, role -> model and
sampling) and what it was built from (versions, optimizer, trainset hash, signature hashes,
dev scores). An artifact built by another format or DSPy/freyr version is refused.
"""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import dspy
from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.domains import PLAIN_DOMAIN_NAME
from freyr_dspy.errors import ArtifactError
from freyr_dspy.program import FreyrProgram, ProgramSpec
from freyr_dspy.roles import signature_hash
from freyr_dspy.schemas import OptimizerConfig, RoleModel
from freyr_dspy.tools import toolbox_fingerprint

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ArtifactMeta",
    "ArtifactScores",
    "build_meta",
    "check_versions",
    "freyr_version",
    "role_signature_hashes",
]

FORMAT = "freyr-artifact"
FORMAT_VERSION = 1


class ArtifactScores(BaseModel):
    """Dev scores (success in [0, 1]) and cost before and after compiling."""

    model_config = ConfigDict(extra="forbid")

    before: float | None = None
    after: float | None = None
    dev_size: int = 0
    tokens_per_request_before: float | None = None
    tokens_per_request_after: float | None = None


class ArtifactMeta(BaseModel):
    """Everything recorded next to a compiled program's state."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    freyr_version: str
    dspy_version: str
    python_version: str = Field(default_factory=platform.python_version)
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    benchmark: str | None = None
    eval_mode: str | None = None
    eval_extra: dict[str, Any] = Field(default_factory=dict)
    program: ProgramSpec
    assignment: dict[str, RoleModel] = Field(default_factory=dict)
    optimizer: OptimizerConfig | None = None
    trainset_sha256: str | None = None
    n_train: int = 0
    signature_hashes: dict[str, str]
    scores: ArtifactScores = Field(default_factory=ArtifactScores)
    cache: bool = False
    #: The artifact this one was compiled on top of (``freyr compile --start``), if any.
    started_from: str | None = None
    #: Fingerprint of the domain's data names the state refers to by position, if any.
    name_refs: str | None = None
    #: Tool -> hash of the user's tools a plain tool-use program was compiled for
    #: (``tools.fingerprint``); None when it takes any toolbox (rows brought their own).
    toolbox: dict[str, str] | None = None
    #: How the compile study chose this program: trials, scores, the guard's decision.
    search: dict[str, Any] | None = None


def build_meta(program: FreyrProgram, **fields: Any) -> ArtifactMeta:
    """Describe ``program`` (structure, models, signature hashes, versions) plus ``fields``.

    A plain tool-use program records its toolbox's fingerprint, not the tools' text; pass
    ``toolbox=None`` for one compiled to work with any toolbox.
    """
    plain = program.domain.name == PLAIN_DOMAIN_NAME and len(program.toolbox) > 0
    fields.setdefault("toolbox", toolbox_fingerprint(program.toolbox) if plain else None)
    return ArtifactMeta(
        freyr_version=freyr_version(),
        dspy_version=dspy.__version__,
        program=program.spec(),
        assignment=dict(program.assignment),
        signature_hashes=role_signature_hashes(program),
        **fields,
    )


def role_signature_hashes(program: FreyrProgram) -> dict[str, str]:
    """Role id -> hash of the role's signature as the code defines it."""
    return {role: signature_hash(type(program.role(role)).signature) for role in program.role_names}


def check_versions(meta: ArtifactMeta, path: Path) -> None:
    """Refuse an artifact of another format version, or another DSPy or freyr minor version.

    Raises:
        ArtifactError: naming the versions, and asking to recompile.
    """
    if meta.format_version != FORMAT_VERSION:
        raise ArtifactError(
            f"artifact {path} has format version {meta.format_version}; this "
            f"freyr reads version {FORMAT_VERSION}: recompile it"
        )
    for name, built, running in (
        ("dspy", meta.dspy_version, dspy.__version__),
        ("freyr-dspy", meta.freyr_version, freyr_version()),
    ):
        if _minor(built) != _minor(running):
            raise ArtifactError(
                f"artifact {path} was built with {name} {built}, this is "
                f"{running}: recompile it with `freyr compile`"
            )


def _minor(text: str) -> str:
    return ".".join(text.split(".")[:2])


def freyr_version() -> str:
    """The installed freyr-dspy version (``0.0.0`` in a source tree that was not installed)."""
    try:
        return version("freyr-dspy")
    except PackageNotFoundError:
        return "0.0.0"
