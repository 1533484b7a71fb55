"""``freyr eval``: benchmark strategies (and compiled programs) side by side.

The command only parses options, runs ``freyr_dspy.evaluation.evaluate`` and renders the
report; progress goes to stderr (a bar on a terminal, a line every few minutes in a log).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from freyr_dspy.cli._common import (
    data_option,
    echo_json,
    json_option,
    make_settings,
    model_options,
    option_group,
    progress_bar,
)
from freyr_dspy.cli._dataset import dataset_options, open_dataset
from freyr_dspy.cli._eval_reports import compare, export, stats
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation import (
    PAPER_SAMPLING,
    EvalConfig,
    evaluate,
    render_text,
    report_data,
    write_json,
)

__all__ = []


def _csv(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


#: Options passed to the benchmarks in ``EvalOptions.extra`` (each uses those it knows).
benchmark_options = option_group(
    click.option("--domains", help="CallNavi: comma-separated domains (default: all)."),
    click.option("--difficulty", help="CallNavi: comma-separated easy,medium,hard."),
    click.option(
        "--prompt",
        type=click.Choice(["paper", "signature"]),
        help="NLT: the paper's system prompt or our role signature.",
    ),
    click.option(
        "--tools-file",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        help="NLT: alternative tool descriptions (robustness).",
    ),
    click.option("--state-view", help="LLMaker: state rendering the roles see."),
    click.option(
        "--inner",
        type=click.Choice(["freyr", "nlt"]),
        help="gated: the strategy run inside the gate.",
    ),
)

#: What to evaluate, how often, and where the report goes.
_eval_options = option_group(
    click.option(
        "--benchmark", "benchmarks", default=None, help="Comma-separated registered benchmarks."
    ),
    click.option(
        "--strategy",
        "strategies",
        default=None,
        help=(
            "Comma-separated strategies (default: the benchmark's own list). A strategy's "
            "settings can be switched on after '+': freyr+calibrate."
        ),
    ),
    click.option(
        "--program",
        "programs",
        multiple=True,
        type=click.Path(path_type=Path),
        help="Compiled program(s) to evaluate beside the strategies: repeatable, or a,b.json.",
    ),
    click.option("--runs", default=1, show_default=True, type=click.IntRange(1)),
    click.option(
        "--mode",
        type=click.Choice(["bootstrap", "iterative"]),
        default="bootstrap",
        show_default=True,
        help="Steps start from their given state, or carry it on.",
    ),
    data_option,
    click.option("--limit", type=click.IntRange(1), help="At most N episodes per benchmark."),
    click.option(
        "--jobs",
        default=1,
        show_default=True,
        type=click.IntRange(1),
        help="Units run at once (threads); embedded models run one call at a time.",
    ),
    click.option(
        "--out",
        type=click.Path(path_type=Path, dir_okay=False),
        help="Save config, aggregates and raw records as JSON; resumable.",
    ),
    click.option("--restart", is_flag=True, help="Discard the --out checkpoint; start over."),
    click.option(
        "--report-only",
        is_flag=True,
        help="Run nothing: report the units already in the --out checkpoint (also mid-run).",
    ),
)


@click.group("eval", invoke_without_command=True, subcommand_metavar="[COMMAND [ARGS]...]")
@_eval_options
@dataset_options
@benchmark_options
@model_options
@json_option
@click.pass_context
def command(ctx: click.Context, **options: Any) -> None:
    """Evaluate strategies on benchmarks, or on your tools and examples, side by side.

    A Table-2-style report with 95 % intervals. Sampling defaults to the FREYR paper's
    (temperature 0.8, top_p 0.6); --sampling overrides it. With --out, every finished unit
    is checkpointed beside the file (OUT.checkpoint.jsonl): running the same command again
    resumes. The commands below read saved --out files instead of running anything.
    """
    if ctx.invoked_subcommand is None:  # a command reads saved files; the options are unused
        _evaluate(**options)


command.add_command(compare)
command.add_command(stats)
command.add_command(export)


def _evaluate(
    *,
    benchmarks: str | None,
    out: Path | None,
    restart: bool,
    report_only: bool,
    as_json: bool,
    **options: Any,
) -> None:
    with open_dataset(options, benchmarks) as dataset:
        if dataset is not None:
            benchmarks = dataset.benchmark.name
            options["dataset"] = dataset.digest  # a changed file must not resume old units
        config = _config(benchmarks, **options)
        if report_only:
            if out is None:
                raise ConfigError("--report-only reads the checkpoint of --out FILE; pass --out")
            evaluation = evaluate(config, checkpoint=checkpoint_path(out), report_only=True)
            click.echo(
                _report_only_status(len(evaluation.units), len(evaluation.plan.units)), err=True
            )
        else:
            with progress_bar("eval", unit="unit") as progress:
                evaluation = evaluate(
                    config, checkpoint=checkpoint_path(out), restart=restart, progress=progress
                )
        data = report_data(evaluation)
        if out is not None and not report_only:
            write_json(out, data)
            click.echo(f"saved {out}", err=True)
        if as_json:
            echo_json(data)
        else:
            click.echo(render_text(data), nl=False)


def _config(
    benchmarks: str | None,
    *,
    strategies: str | None,
    programs: tuple[Path, ...],
    runs: int,
    mode: str,
    data_dir: Path | None,
    limit: int | None,
    jobs: int,
    model_specs: tuple[str, ...],
    sampling_specs: tuple[str, ...],
    api_base: str | None,
    **extra: Any,
) -> EvalConfig:
    """The evaluation the options describe (``extra``: the benchmark options)."""
    settings = make_settings(data_dir=data_dir)
    return EvalConfig(
        benchmarks=_csv(benchmarks or ""),
        strategies=_csv(strategies),
        programs=tuple(Path(p) for value in programs for p in _csv(str(value))),
        runs=runs,
        mode=mode,  # type: ignore[arg-type]
        data_dir=_data_dir(settings, "dataset" in extra),
        limit=limit,
        extra=_extra(extra),
        default_model=settings.default_model,
        model_specs=model_specs,
        sampling_specs=(*PAPER_SAMPLING, *sampling_specs),
        api_base=api_base,
        jobs=jobs,
        settings=settings,
    )


def _data_dir(settings: Any, own_dataset: bool) -> Path:
    """The benchmark data folder; a user's own examples need none."""
    if own_dataset:
        return settings.data_dir or Path(".")
    path: Path = settings.resolve_data_dir()
    return path


def checkpoint_path(out: Path | None) -> Path | None:
    """Where the units of an evaluation saved to ``out`` are checkpointed."""
    return None if out is None else out.with_name(out.name + ".checkpoint.jsonl")


def _extra(values: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name in {"domains", "difficulty"}:
            extra[name] = list(_csv(value))
        else:
            extra[name] = str(value) if isinstance(value, Path) else value
    return extra


def _report_only_status(finished: int, planned: int) -> str:
    """Tell whether a --report-only report covers the whole plan or part of it."""
    kind = "complete report" if finished >= planned else "partial report"
    return f"{kind}: {finished} of {planned} units finished"
