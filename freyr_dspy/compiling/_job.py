"""Compile a program into an artifact: the one path ``freyr compile`` and ``--compile-best`` take.

``compile_job`` builds the program a ``CompileJob`` describes (an uncompiled strategy, or a
compiled artifact to continue from with ``start``), resolves its demo settings against it and
hands it to ``compile_artifact``, which the search's ``compile_best`` calls too: compile, record
the metadata, write the artifact. Commands only parse options into a job and print the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from freyr_dspy.artifacts import (
    ArtifactMeta,
    ArtifactScores,
    benchmark_data_dir,
    build_meta,
    save,
    starting_point,
)
from freyr_dspy.benchmark import Benchmark, EvalOptions
from freyr_dspy.compiling._compiler import CompileReport, compile_program
from freyr_dspy.compiling._dataset_demos import deciding_roles, tool_text_fields
from freyr_dspy.compiling._optimizers import OptimizerConfig
from freyr_dspy.datasets import ToolCallBenchmark
from freyr_dspy.errors import ConfigError, UnknownRoleError
from freyr_dspy.evaluation import EvalSummary, Progress
from freyr_dspy.program import FreyrProgram, ProgramSpec, build_assignment, override_assignment
from freyr_dspy.settings import Settings

__all__ = [
    "CompileJob",
    "CompiledArtifact",
    "compile_artifact",
    "compile_job",
    "demo_omit_fields",
    "regression_warning",
    "report_meta",
]


@dataclass(frozen=True)
class CompileJob:
    """What to compile, with which models and optimizer, and where the artifact goes.

    Args:
        benchmark: gives the program, the trainset and the metric.
        optimizer: the optimizer and its knobs; ``demo_roles`` and ``demo_omit`` are checked
            against the program (for a user's examples they default to the deciding roles
            and to leaving the tools' own text out).
        strategy: the strategy label (default: the benchmark's first); not with ``start``.
        start: a compiled artifact to continue from: its program, models and options.
        mode: the benchmark mode (default ``bootstrap``); not with ``start``.
        extra: benchmark options (``EvalOptions.extra``); not with ``start``.
        model_specs: ``[ROLE=]ID`` models, over the start's when there is one.
        sampling_specs: ``[ROLE.]PARAM=VALUE`` sampling, likewise.
        api_base: server URL of the models.
        dev_fraction: share of the trainset kept for the dev scores.
        path: the artifact (default: ``compiled/<name>.json``).
        name: the artifact's default name (default: the benchmark's).
        dataset: digest of the user's tools and examples when the benchmark is theirs.
        keep_tool_text: let a user's demos keep the tool catalogs and specs.
    """

    benchmark: Benchmark
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    strategy: str | None = None
    start: Path | None = None
    mode: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    model_specs: tuple[str, ...] = ()
    sampling_specs: tuple[str, ...] = ()
    api_base: str | None = None
    dev_fraction: float = 0.3
    path: Path | None = None
    name: str | None = None
    dataset: str | None = None
    keep_tool_text: bool = False


@dataclass(frozen=True)
class CompiledArtifact:
    """An artifact written by ``compile_artifact``, with the compiler's evidence for it."""

    path: Path
    benchmark: str
    report: CompileReport
    started_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        """What a command prints with ``--json``."""
        report = self.report
        return {
            "benchmark": self.benchmark,
            "strategy": report.program.strategy_name,
            "optimizer": report.config.model_dump(),
            "n_train": report.n_train,
            "n_dev": report.n_dev,
            "before": report.before.to_json() if report.before else None,
            "after": report.after.to_json(),
            "trainset_sha256": report.trainset_sha256,
            "seconds": report.seconds,
            "artifact": str(self.path),
            "started_from": self.started_from,
        }


def compile_job(
    job: CompileJob, *, settings: Settings, progress: Progress | None = None
) -> CompiledArtifact:
    """Build the job's program, compile it and write the artifact.

    Raises:
        ConfigError: the job contradicts its ``start`` artifact or would overwrite it, or
            names demo roles or fields the program does not have.
        ArtifactError: the ``start`` artifact cannot be loaded.
    """
    own = job.benchmark if isinstance(job.benchmark, ToolCallBenchmark) else None
    target = job.path or settings.compiled_dir / f"{job.name or job.benchmark.name}.json"
    if job.start is not None:
        program, options, started_from = _continued(job, settings, target, own)
    else:
        options, started_from = _options(job, settings), None
        program = _fresh(job, settings, options)
    optimizer = job.optimizer.model_copy(
        update={
            "demo_roles": _demo_roles(job.optimizer.demo_roles, program, own is not None),
            "demo_omit": demo_omit_fields(
                program, job.optimizer.demo_omit, own is not None and not job.keep_tool_text
            ),
        }
    )
    return compile_artifact(
        program,
        job.benchmark,
        optimizer,
        settings=settings,
        options=options,
        path=target,
        dev_fraction=job.dev_fraction,
        started_from=started_from,
        cache=settings.cache,
        progress=progress,
    )


def compile_artifact(
    program: FreyrProgram,
    benchmark: Benchmark,
    optimizer: OptimizerConfig,
    *,
    settings: Settings,
    options: EvalOptions,
    path: Path,
    dev_fraction: float = 0.3,
    started_from: str | None = None,
    cache: bool = False,
    progress: Progress | None = None,
) -> CompiledArtifact:
    """Compile ``program``, then write it with its metadata to ``path``.

    Args:
        program: a program whose roles have their models.
        benchmark: gives the trainset and the metric; a user's examples bring their dev rows.
        optimizer: which optimizer, with its knobs.
        settings: where ``trainsets/`` lives.
        options: the benchmark options, recorded in the artifact.
        path: where to write.
        dev_fraction: share of the trainset kept for dev when there are no dev rows.
        started_from: the artifact compiled on top of, recorded.
        cache: whether the program's models use the DSPy cache, recorded.
        progress: called with (finished, total) dev examples while scoring.

    Returns:
        The written artifact and the compiler's report (dev scores before and after).
    """
    own = benchmark if isinstance(benchmark, ToolCallBenchmark) else None
    report = compile_program(
        program,
        benchmark,
        optimizer,
        settings=settings,
        options=options,
        devset=own.devset() if own else None,
        dev_fraction=dev_fraction,
        progress=progress,
    )
    meta = report_meta(
        report,
        benchmark=benchmark.name,
        options=options,
        cache=cache,
        any_toolbox=own is not None and own.tool_agnostic,
    )
    meta = meta.model_copy(update={"started_from": started_from})
    return CompiledArtifact(save(report.program, path, meta), benchmark.name, report, started_from)


def report_meta(
    report: CompileReport,
    *,
    benchmark: str,
    options: EvalOptions,
    cache: bool = False,
    any_toolbox: bool = False,
) -> ArtifactMeta:
    """The metadata of a compiled program: ``build_meta`` plus what compiling measured.

    ``any_toolbox``: the program was compiled on rows with tools of their own, so it
    records no toolbox fingerprint and loads with any toolbox.

    Scores keep the precision artifacts have always recorded (success to 4 decimals,
    tokens per step to 1), so files written before and after compare equal.
    """
    before, after = report.before, report.after
    scores = ArtifactScores(
        before=round(before.accuracy, 4) if before else None,
        after=round(after.accuracy, 4),
        dev_size=report.n_dev,
        tokens_per_request_before=round(before.tokens, 1) if before else None,
        tokens_per_request_after=round(after.tokens, 1),
    )
    return build_meta(
        report.program,
        benchmark=benchmark,
        eval_mode=options.mode,
        eval_extra=dict(options.extra),
        optimizer=report.config,
        trainset_sha256=report.trainset_sha256,
        n_train=report.n_train,
        scores=scores,
        cache=cache,
        **({"toolbox": None} if any_toolbox else {}),
    )


def regression_warning(before: EvalSummary | None, after: EvalSummary) -> str | None:
    """Say so when compiling lowered the dev score, or None.

    The artifact is still written: a dev part of ten requests moves by a tenth per request, and
    only the test inputs can tell a regression from noise. But a user who reads only the last
    line must not ship it unmeasured.
    """
    if before is None or after.accuracy >= before.accuracy:
        return None
    return (
        f"the compiled program scores below the uncompiled one on dev "
        f"({after.accuracy:.3f} < {before.accuracy:.3f}); compare both on test inputs "
        "(freyr eval --program ARTIFACT beside --strategy) before using it"
    )


def _options(job: CompileJob, settings: Settings) -> EvalOptions:
    extra = {**job.extra, **({"dataset": job.dataset} if job.dataset else {})}
    return EvalOptions(
        data_dir=benchmark_data_dir(settings), mode=job.mode or "bootstrap", extra=extra
    )


def _fresh(job: CompileJob, settings: Settings, options: EvalOptions) -> FreyrProgram:
    """The uncompiled program of the job's strategy, with its models."""
    spec = ProgramSpec(strategy=job.strategy or job.benchmark.strategies[0])
    program = FreyrProgram.from_spec(spec, benchmark=job.benchmark, eval_options=options)
    assignment = build_assignment(
        program.role_names,
        default_model=settings.default_model,
        model_specs=job.model_specs,
        sampling_specs=job.sampling_specs,
        api_base=job.api_base,
    )
    return program.apply_assignment(assignment, cache=settings.cache)


def _continued(
    job: CompileJob, settings: Settings, target: Path, own: ToolCallBenchmark | None
) -> tuple[FreyrProgram, EvalOptions, str]:
    """The ``start`` artifact's program, options and label, with the job's models over its."""
    assert job.start is not None  # the caller checked
    begin = starting_point(
        job.start,
        benchmark=job.benchmark.name,
        strategy=job.strategy,
        mode=job.mode,
        extra=job.extra,
        settings=settings,
        toolbox=own.program_toolbox if own else None,
    )
    if target.resolve() == begin.path:
        raise ConfigError(f"--out {target} would overwrite --start {job.start}; name another file")
    options = begin.options
    if job.dataset:  # the examples it continues on are this run's
        options = replace(options, extra={**options.extra, "dataset": job.dataset})
    assignment = override_assignment(
        begin.program.assignment,
        model_specs=job.model_specs,
        sampling_specs=job.sampling_specs,
        api_base=job.api_base,
    )
    program = begin.program.apply_assignment(assignment, cache=settings.cache)
    return program, options, begin.label


def _demo_roles(
    named: tuple[str, ...] | None, program: FreyrProgram, own_examples: bool
) -> tuple[str, ...] | None:
    """The roles that keep demos; for a user's examples, the deciding roles by default."""
    for role in named or ():
        if role not in program.role_names:
            raise UnknownRoleError(role, program.role_names)
    if named is not None or not own_examples:
        return named
    return deciding_roles(program)


def demo_omit_fields(
    program: FreyrProgram, named: tuple[str, ...], omit_tool_text: bool
) -> tuple[str, ...]:
    """The demo fields left out: ``named`` (each an input of some role), plus tool text.

    Raises:
        ConfigError: a named field no role of ``program`` takes as input.
    """
    inputs = {f for _, p in program.named_predictors() for f in p.signature.input_fields}
    for name in named:
        if name not in inputs:
            raise ConfigError(
                f"--demo-omit: no role of this program has an input field {name!r} "
                f"(inputs: {', '.join(sorted(inputs))})"
            )
    if not omit_tool_text:
        return named
    return tuple(dict.fromkeys((*named, *tool_text_fields(program))))
