"""``freyr compile``: compile a benchmark's program on its trainset and write an artifact."""

from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from freyr_dspy.assignment import build_assignment, override_assignment
from freyr_dspy.cli._common import (
    echo_json,
    json_option,
    make_settings,
    model_options,
    progress_bar,
)
from freyr_dspy.cli._dataset import Dataset, dataset_options, open_dataset
from freyr_dspy.compiler import CompileReport
from freyr_dspy.errors import ConfigError, UnknownRoleError
from freyr_dspy.evaluation.scoring import EvalSummary
from freyr_dspy.optimizers import OPTIMIZER_NAMES

__all__ = ["command", "parse_options"]


@click.command("compile")
@click.option("--benchmark", "benchmark_name", default=None, help="Registered benchmark name.")
@click.option("--strategy", default=None, help="Strategy (default: the benchmark's first).")
@click.option(
    "--start",
    type=click.Path(path_type=Path),
    default=None,
    metavar="ARTIFACT",
    help="Start from this compiled program (demos, instructions, models, benchmark options) "
    "instead of an uncompiled one, e.g. gepa on top of labeled demos.",
)
@click.option(
    "--optimizer",
    default="labeled",
    show_default=True,
    type=click.Choice(OPTIMIZER_NAMES),
)
@model_options
@click.option("--teacher", default=None, help="Model id of the bootstrap teacher.")
@click.option(
    "--reflection", default=None, help="Model id writing instructions (MIPROv2, GEPA, SIMBA)."
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help="Optimizer effort: candidate sets, trials, metric calls or steps.",
)
@click.option(
    "--max-demos", type=click.IntRange(0, 16), default=2, show_default=True, help="Demos per role."
)
@click.option(
    "--demo-maxlen",
    type=click.IntRange(min=20),
    default=None,
    help="Cut demo input fields longer than this many characters.",
)
@click.option(
    "--demo-roles",
    default=None,
    metavar="ROLE,...",
    help="Only these roles keep demos (default: every role).",
)
@click.option(
    "--demo-omit",
    default=None,
    metavar="FIELD,...",
    help="Input fields left out of every demo (e.g. tools: the catalog is in the request).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--dev-fraction", type=click.FloatRange(0.05, 0.9), default=0.3, show_default=True)
@click.option("--mode", default=None, help="Benchmark mode.  [default: bootstrap]")
@click.option(
    "--option",
    "extra_specs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Benchmark option (e.g. max_retries=1); recorded in the artifact.",
)
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    default=None,
    help="Benchmark data directory (else FREYR_DATA_DIR, else ../shared/benchmarks).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Artifact path (default: compiled/<benchmark or examples file>.json).",
)
@click.option(
    "--keep-tool-text",
    is_flag=True,
    help="Let demos keep the tool catalogs and specs (default: left out of the artifact).",
)
@dataset_options
@json_option
def command(**options: Any) -> None:
    """Compile a program for a benchmark or your examples; print dev scores before and after."""
    with open_dataset(options, options["benchmark_name"], allow_unlabelled=True) as dataset:
        if dataset is not None:
            _label_missing(dataset, options["teacher"], options["strategy"], options["api_base"])
        _compile(dataset, **options)


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
            teacher_program(teacher, strategy or "freyr", api_base),
            progress=progress,
        )
    dataset.benchmark.rows = labelling.rows
    click.echo(
        f"labelled {labelling.labelled} row(s) with {teacher}; dropped "
        f"{len(labelling.dropped)} its tools refused",
        err=True,
    )


def _compile(
    dataset: Dataset | None,
    *,
    benchmark_name: str | None,
    strategy: str | None,
    start: Path | None,
    optimizer: str,
    model_specs: tuple[str, ...],
    sampling_specs: tuple[str, ...],
    api_base: str | None,
    teacher: str | None,
    reflection: str | None,
    budget: int | None,
    max_demos: int,
    demo_maxlen: int | None,
    demo_roles: str | None,
    demo_omit: str | None,
    seed: int,
    dev_fraction: float,
    mode: str | None,
    extra_specs: tuple[str, ...],
    data: Path | None,
    out: Path | None,
    keep_tool_text: bool,
    as_json: bool,
) -> None:
    from freyr_dspy.artifacts import benchmark_data_dir, report_meta, save, starting_point
    from freyr_dspy.benchmarks import EvalOptions, get_benchmark
    from freyr_dspy.compiler import compile_program
    from freyr_dspy.evaluation.spec import ProgramSpec, build_program
    from freyr_dspy.optimizers import OptimizerConfig

    settings = make_settings(data_dir=data)
    benchmark = dataset.benchmark if dataset else get_benchmark(str(benchmark_name))
    extra = parse_options(extra_specs)
    if dataset is not None:
        extra["dataset"] = dataset.digest
    default_name = dataset.examples.stem if dataset else benchmark.name
    target = out or settings.compiled_dir / f"{default_name}.json"
    started_from = None
    if start is not None:
        begin = starting_point(
            start,
            benchmark=benchmark.name,
            strategy=strategy,
            mode=mode,
            extra=parse_options(extra_specs),
            settings=settings,
            toolbox=dataset.benchmark.program_toolbox if dataset else None,
        )
        if target.resolve() == begin.path:
            raise ConfigError(f"--out {target} would overwrite --start {start}; name another file")
        program, options, started_from = begin.program, begin.options, begin.label
        if dataset is not None:  # the examples it continues on are this run's
            options = replace(options, extra={**options.extra, "dataset": dataset.digest})
        assignment = override_assignment(
            program.assignment,
            model_specs=model_specs,
            sampling_specs=sampling_specs,
            api_base=api_base,
        )
    else:
        options = EvalOptions(
            data_dir=benchmark_data_dir(settings), mode=mode or "bootstrap", extra=extra
        )
        spec = ProgramSpec(strategy=strategy or benchmark.strategies[0])
        program = build_program(spec, benchmark=benchmark, eval_options=options)
        assignment = build_assignment(
            program.role_names,
            default_model=settings.default_model,
            model_specs=model_specs,
            sampling_specs=sampling_specs,
            api_base=api_base,
        )
    program.apply_assignment(assignment, cache=settings.cache)
    config = OptimizerConfig.model_validate(
        dict(
            name=optimizer,
            budget=budget,
            teacher=teacher,
            reflection=reflection,
            seed=seed,
            max_demos=max_demos,
            demo_field_maxlen=demo_maxlen,
            demo_roles=_demo_roles(demo_roles, program, dataset is not None),
            demo_omit=_demo_omit(demo_omit, program, dataset is not None and not keep_tool_text),
            num_threads=settings.num_threads,
        )
    )
    # NOTE: some DSPy optimizers print their progress; stdout is kept for the results.
    with contextlib.redirect_stdout(sys.stderr), progress_bar("dev", unit="step") as progress:
        report = compile_program(
            program,
            benchmark,
            config,
            settings=settings,
            options=options,
            devset=dataset.benchmark.devset() if dataset else None,
            dev_fraction=dev_fraction,
            progress=progress,
        )
    meta = report_meta(
        report,
        benchmark=benchmark.name,
        options=options,
        cache=settings.cache,
        any_toolbox=dataset is not None and dataset.benchmark.tool_agnostic,
    )
    meta = meta.model_copy(update={"started_from": started_from})
    path = save(report.program, target, meta)
    summary = {**_summary(report, benchmark.name, path), "started_from": started_from}
    if as_json:
        echo_json(summary)
    else:
        _render(summary, report)
    warning = regression_warning(report.before, report.after)
    if warning:  # on stderr, so --json output stays one JSON document
        click.echo(f"warning: {warning}", err=True)


def _demo_omit(spec: str | None, program: Any, omit_tool_text: bool) -> tuple[str, ...]:
    """The fields ``--demo-omit`` names, plus the tools' own text for a user's tools."""
    named = _input_fields(spec, program)
    if not omit_tool_text:
        return named
    from freyr_dspy.workflows import tool_text_fields

    return tuple(dict.fromkeys((*named, *tool_text_fields(program))))


def _demo_roles(spec: str | None, program: Any, own_dataset: bool) -> tuple[str, ...] | None:
    """The roles ``--demo-roles`` names; for a user's examples, the deciding roles by default."""
    named = _roles(spec, program.role_names)
    if named is not None or not own_dataset:
        return named
    from freyr_dspy.workflows import deciding_roles

    return deciding_roles(program)


def _input_fields(spec: str | None, program: Any) -> tuple[str, ...]:
    """The named demo fields, each an input field of at least one of the program's roles."""
    names = tuple(n.strip() for n in (spec or "").split(",") if n.strip())
    inputs = {f for _, p in program.named_predictors() for f in p.signature.input_fields}
    for name in names:
        if name not in inputs:
            raise ConfigError(
                f"--demo-omit: no role of this program has an input field {name!r} "
                f"(inputs: {', '.join(sorted(inputs))})"
            )
    return names


def _roles(spec: str | None, known: tuple[str, ...]) -> tuple[str, ...] | None:
    if spec is None:
        return None
    roles = tuple(r.strip() for r in spec.split(",") if r.strip())
    for role in roles:
        if role not in known:
            raise UnknownRoleError(role, known)
    return roles


def parse_options(specs: tuple[str, ...]) -> dict[str, Any]:
    """Read ``KEY=VALUE`` options; a value is JSON when it parses (``3``, ``true``), else text.

    Raises:
        ConfigError: for a spec without ``=``.
    """
    options: dict[str, Any] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad option {spec!r}; expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


def _summary(report: CompileReport, benchmark: str, path: Path) -> dict[str, Any]:
    return {
        "benchmark": benchmark,
        "strategy": report.program.strategy_name,
        "optimizer": report.config.model_dump(),
        "n_train": report.n_train,
        "n_dev": report.n_dev,
        "before": report.before.to_json() if report.before else None,
        "after": report.after.to_json(),
        "trainset_sha256": report.trainset_sha256,
        "seconds": report.seconds,
        "artifact": str(path),
    }


def _render(summary: dict[str, Any], report: CompileReport) -> None:
    started = f", started from {summary['started_from']}" if summary["started_from"] else ""
    click.echo(
        f"compiled {summary['benchmark']} (strategy {summary['strategy']}, optimizer "
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
    click.echo(f"wrote {summary['artifact']}")


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
