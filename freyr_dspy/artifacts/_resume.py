"""A compiled program to compile further (``freyr compile --start``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freyr_dspy.artifacts._io import read_artifact, resolve_path
from freyr_dspy.artifacts._rebuild import benchmark_data_dir, check_toolbox, program_from
from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Toolbox

__all__ = ["StartingPoint", "starting_point"]


@dataclass(frozen=True)
class StartingPoint:
    """A compiled program to compile further, and the benchmark options it was scored with."""

    program: FreyrProgram
    options: EvalOptions
    #: The artifact's resolved path (a compile must not write over it).
    path: Path
    #: What the new artifact records as ``started_from``: the path in ``compiled/`` and optimizer.
    label: str


def starting_point(
    path: str | Path,
    *,
    benchmark: str,
    strategy: str | None = None,
    mode: str | None = None,
    extra: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    toolbox: Toolbox | None = None,
) -> StartingPoint:
    """Load an artifact to compile on top of (``freyr compile --start``).

    The artifact fixes the program and the benchmark options it was compiled with; a
    ``strategy``, ``mode`` or ``extra`` that says otherwise is refused rather than ignored.
    ``toolbox``: the tools of a program compiled for a user's tools (see ``load``).

    Raises:
        ConfigError: the artifact is for another benchmark, or the arguments contradict it.
        ArtifactError: see ``load``.
    """
    settings = settings or Settings()
    resolved = resolve_path(path, settings.compiled_dir)
    meta, state = read_artifact(resolved, settings=settings)
    if meta.benchmark != benchmark:
        raise ConfigError(f"--start {path} was compiled for {meta.benchmark!r}, not {benchmark!r}")
    recorded_mode = meta.eval_mode or "bootstrap"
    if strategy not in (None, meta.program.strategy) or mode not in (None, recorded_mode) or extra:
        raise ConfigError(
            f"--start {path} fixes the strategy ({meta.program.strategy}), mode "
            f"({recorded_mode}) and options; leave --strategy, --mode and --option out"
        )
    options = EvalOptions(
        data_dir=benchmark_data_dir(settings), mode=recorded_mode, extra=dict(meta.eval_extra)
    )
    where = resolved.relative_to(settings.compiled_dir.resolve())
    optimizer = meta.optimizer.name if meta.optimizer else "uncompiled"
    if toolbox is not None:
        check_toolbox(meta, toolbox, path, allow_changed=False)
    return StartingPoint(
        program=program_from(meta, state, resolved, settings, toolbox=toolbox),
        options=options,
        path=resolved,
        label=f"{where} ({optimizer})",
    )
