"""``freyr compile``: compile a benchmark's program on its trainset and write an artifact."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from freyr_dspy.benchmark import get_benchmark
from freyr_dspy.cli._common import (
    data_option,
    echo_json,
    json_option,
    make_settings,
    model_options,
    option_group,
    progress_bar,
)
from freyr_dspy.cli._dataset import Dataset, dataset_options, open_dataset
from freyr_dspy.compiling.job import CompiledArtifact, CompileJob, compile_job, regression_warning
from freyr_dspy.compiling.optimizers import OPTIMIZER_NAMES, OptimizerConfig
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation.config import parse_benchmark_options
from freyr_dspy.settings import Settings

__all__ = ["command", "regression_warning"]

#: What to compile, from where, with which optimizer.
_program_options = option_group(
    click.option("--benchmark", "benchmark_name", default=None, help="Registered benchmark name."),
    click.option("--strategy", default=None, help="Strategy (default: the benchmark's first)."),
    click.option(
        "--start",
        type=click.Path(path_type=Path),
        default=None,
        metavar="ARTIFACT",
        help="Start from this compiled program (demos, instructions, models, benchmark options) "
        "instead of an uncompiled one, e.g. gepa on top of labeled demos.",
    ),
    click.option(
        "--optimizer",
        default="labeled",
        show_default=True,
        type=click.Choice(OPTIMIZER_NAMES),
    ),
)

#: The models that teach and write instructions, and the optimizer's effort.
_teacher_options = option_group(
    click.option("--teacher", default=None, help="Model id of the bootstrap teacher."),
    click.option(
        "--reflection", default=None, help="Model id writing instructions (MIPROv2, GEPA, SIMBA)."
    ),
    click.option(
        "--budget",
        type=click.IntRange(min=1),
        default=None,
        help="Optimizer effort: candidate sets, trials, metric calls or steps.",
    ),
)

#: What the demos hold.
_demo_options = option_group(
    click.option(
        "--max-demos",
        type=click.IntRange(0, 16),
        default=2,
        show_default=True,
        help="Demos per role.",
    ),
    click.option(
        "--demo-maxlen",
        type=click.IntRange(min=20),
        default=None,
        help="Cut demo input fields longer than this many characters.",
    ),
    click.option(
        "--demo-roles",
        default=None,
        metavar="ROLE,...",
        help="Only these roles keep demos (default: every role).",
    ),
    click.option(
        "--demo-omit",
        default=None,
        metavar="FIELD,...",
        help="Input fields left out of every demo (e.g. tools: the catalog is in the request).",
    ),
)

#: The split, the benchmark's options and data, the artifact.
_run_options = option_group(
    click.option("--seed", type=int, default=0, show_default=True),
    click.option(
        "--dev-fraction", type=click.FloatRange(0.05, 0.9), default=0.3, show_default=True
    ),
    click.option("--mode", default=None, help="Benchmark mode.  [default: bootstrap]"),
    click.option(
        "--option",
        "extra_specs",
        multiple=True,
        metavar="KEY=VALUE",
        help="Benchmark option (e.g. max_retries=1); recorded in the artifact.",
    ),
    data_option,
    click.option(
        "--out",
        type=click.Path(path_type=Path),
        default=None,
        help="Artifact path (default: compiled/<benchmark or examples file>.json).",
    ),
    click.option(
        "--keep-tool-text",
        is_flag=True,
        help="Let demos keep the tool catalogs and specs (default: left out of the artifact).",
    ),
)


@click.command("compile")
@_program_options
@model_options
@_teacher_options
@_demo_options
@_run_options
@dataset_options
@json_option
def command(data_dir: Path | None, as_json: bool, **options: Any) -> None:
    """Compile a program for a benchmark or your examples; print dev scores before and after."""
    with open_dataset(options, options["benchmark_name"], allow_unlabelled=True) as dataset:
        if dataset is not None:
            _label_missing(dataset, options["teacher"], options["strategy"], options["api_base"])
        settings = make_settings(data_dir=data_dir)
        job = _job(dataset, settings, **options)
        # NOTE: some DSPy optimizers print their progress; stdout is kept for the results.
        with contextlib.redirect_stdout(sys.stderr), progress_bar("dev", unit="step") as progress:
            artifact = compile_job(job, settings=settings, progress=progress)
    if as_json:
        echo_json(artifact.to_json())
    else:
        _render(artifact)
    warning = regression_warning(artifact.report.before, artifact.report.after)
    if warning:  # on stderr, so --json output stays one JSON document
        click.echo(f"warning: {warning}", err=True)


def _label_missing(
    dataset: Dataset, teacher: str | None, strategy: str | None, api_base: str | None
) -> None:
    """Label the example rows without calls with ``--teacher`` (rows it cannot label go)."""
    unlabelled = [r for r in dataset.benchmark.rows if not r.example.labelled]
    if not unlabelled:
        return
    if teacher is None:
        raise ConfigError(
            f"{len(unlabelled)} example row(s) have no calls (e.g. {unlabelled[0].where}): "
            "give --teacher MODEL to label them, or label them first with freyr label"
        )
    from freyr_dspy.cli.label_cmd import teacher_program
    from freyr_dspy.datasets.labelling import label_rows

    with progress_bar("label", unit="row") as progress:
        labelling = label_rows(
            dataset.benchmark.rows,
            teacher_program(teacher, strategy, api_base),
            progress=progress,
        )
    dataset.benchmark.rows = labelling.rows
    click.echo(
        f"labelled {labelling.labelled} row(s) with {teacher}; dropped "
        f"{len(labelling.dropped)} its tools refused",
        err=True,
    )


def _job(
    dataset: Dataset | None,
    settings: Settings,
    *,
    benchmark_name: str | None,
    optimizer: str,
    teacher: str | None,
    reflection: str | None,
    budget: int | None,
    max_demos: int,
    demo_maxlen: int | None,
    demo_roles: str | None,
    demo_omit: str | None,
    seed: int,
    extra_specs: tuple[str, ...],
    out: Path | None,
    **job: Any,
) -> CompileJob:
    """The compile the options describe."""
    config = OptimizerConfig.model_validate(
        dict(
            name=optimizer,
            budget=budget,
            teacher=teacher,
            reflection=reflection,
            seed=seed,
            max_demos=max_demos,
            demo_field_maxlen=demo_maxlen,
            demo_roles=None if demo_roles is None else _csv(demo_roles),
            demo_omit=_csv(demo_omit),
            num_threads=settings.num_threads,
        )
    )
    return CompileJob(
        benchmark=dataset.benchmark if dataset else get_benchmark(str(benchmark_name)),
        optimizer=config,
        extra=parse_benchmark_options(extra_specs),
        path=out,
        name=dataset.examples.stem if dataset else None,
        dataset=dataset.digest if dataset else None,
        **job,
    )


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _render(artifact: CompiledArtifact) -> None:
    report = artifact.report
    started = f", started from {artifact.started_from}" if artifact.started_from else ""
    click.echo(
        f"compiled {artifact.benchmark} (strategy {report.program.strategy_name}, optimizer "
        f"{report.config.name}{started}) on {report.n_train} train / {report.n_dev} dev "
        f"examples in {report.seconds:.1f} s"
    )
    for label, scores in (("before", report.before), ("after", report.after)):
        if scores is None:
            continue
        subs = ", ".join(f"{k} {v:.2f}" for k, v in scores.metrics.items())
        click.echo(
            f"dev score {label + ':':<7} {scores.accuracy:.3f}  ({subs}; "
            f"{scores.tokens:.0f} tokens/request; "
            f"failures {scores.failure_kinds or 'none'})"
        )
    click.echo(f"wrote {artifact.path}")
