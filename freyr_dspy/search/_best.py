"""Ship the winner of a search: compile its configuration into an artifact.

The chosen trial is rebuilt from its stored configuration (never from a live object), compiled
with the compiler's optimizers, and saved with the role -> model assignment and sampling it was
searched with, so ``freyr_dspy.load`` gives back exactly the configuration the study measured.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from freyr_dspy.benchmark import Benchmark, EvalOptions
from freyr_dspy.errors import ConfigError
from freyr_dspy.search._objective import build_trial_program
from freyr_dspy.search._result import SearchResult, TrialSummary
from freyr_dspy.settings import Settings

if TYPE_CHECKING:
    from freyr_dspy.compiling import CompiledArtifact

__all__ = ["compile_best"]

logger = logging.getLogger(__name__)


def compile_best(
    result: SearchResult,
    benchmark: Benchmark,
    *,
    settings: Settings,
    options: EvalOptions,
    optimizer: str = "labeled",
    trial: TrialSummary | None = None,
    path: Path | None = None,
) -> CompiledArtifact:
    """Compile the best trial (or ``trial``) and save it as an artifact.

    Args:
        result: the search whose winner is compiled.
        benchmark: gives the trainset and the metric.
        settings: where ``trainsets/`` and ``compiled/`` live.
        options: the benchmark options the search used.
        optimizer: the compiler's optimizer name (``labeled`` needs no LM calls to compile).
        trial: the trial to compile instead of ``result.best``.
        path: where to write; default ``compiled/<benchmark>/search-<study>-t<trial>.json``.

    Returns:
        The artifact and the compiler's report (dev scores before and after).

    Raises:
        ConfigError: when the search has no finished trial to compile.
    """
    from freyr_dspy.compiling import OptimizerConfig, compile_artifact

    chosen = trial or result.best
    config = chosen.trial_config() if chosen else None
    if chosen is None or config is None:
        raise ConfigError(f"study {result.study_name!r} has no finished trial to compile")
    program = build_trial_program(benchmark, config, options)
    demos = {"max_demos": config.num_demos} if config.num_demos else {}
    optimizer_config = OptimizerConfig(name=optimizer, **demos)  # type: ignore[arg-type]
    target = path or (
        settings.compiled_dir / benchmark.name / f"search-{result.study_name}-t{chosen.number}.json"
    )
    # NOTE: the trial's program runs without the DSPy cache (``build_trial_program``).
    artifact = compile_artifact(
        program, benchmark, optimizer_config, settings=settings, options=options, path=target
    )
    logger.info("compiled trial %d of %s into %s", chosen.number, result.study_name, target)
    return artifact
