"""``freyr compile``: fit a program to a benchmark's or a user's rows and write an artifact.

By default a compile study (``freyr_dspy.compiling.fit_program``): the model's preset on every
row, then margins, switches, a demo pool and (given candidates) models tried where its failures
call for them, each scored as the artifact it would ship; the best ships only when the guard
passes. ``--no-search`` fits one configuration instead (the strategy and optimizer given, a dev
split): the compile of earlier versions, and the only one that stacks on an artifact (``--start``).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from freyr_dspy.cli._compile_progress import compile_progress
from freyr_dspy.cli._dataset import Dataset, dataset_options, open_dataset
from freyr_dspy.compiling import (
    OPTIMIZER_NAMES,
    CompiledArtifact,
    CompileJob,
    OptimizerConfig,
    compile_job,
    regression_warning,
)
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation import parse_benchmark_options
from freyr_dspy.schemas import RoleModel
from freyr_dspy.settings import Settings

#: The compile study's defaults (``freyr_dspy.compiling.CompileSettings``).
DEFAULT_MINUTES = 20.0
DEFAULT_FOLDS = 5
STAGES = ("margins", "switches", "demos", "models")

if TYPE_CHECKING:
    from freyr_dspy.compiling import CompileOutcome, CompileSettings

__all__ = []

#: The dev share of a ``--no-search`` compile.
DEV_FRACTION = 0.3

#: What to compile, from where, with which optimizer.
_program_options = option_group(
    click.option("--benchmark", "benchmark_name", default=None, help="Registered benchmark name."),
    click.option(
        "--strategy",
        default=None,
        help="The baseline strategy (default: the model's preset; with --no-search, the "
        "benchmark's first).",
    ),
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
        default=None,
        metavar="NAME",
        help="With --no-search, the optimizer to run (default labeled): "
        f"{', '.join(OPTIMIZER_NAMES)}. The study builds its own demo pools.",
    ),
)

#: The compile study: how long, how it chooses, what it may change.
_search_options = option_group(
    click.option(
        "--no-search",
        is_flag=True,
        help="Fit one configuration (--strategy, --optimizer) on a dev split, as before.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=DEFAULT_MINUTES,
        show_default=True,
        metavar="MINUTES",
        help="The budget: no candidate starts that would end after it (the baseline pass and "
        "held-out rows are scored whatever it is). Resumable.",
    ),
    click.option(
        "--stages",
        default=",".join(STAGES),
        show_default=True,
        metavar="NAME,...",
        help="What the study tries after the baseline pass, in order.",
    ),
    click.option(
        "--folds",
        type=click.IntRange(2),
        default=DEFAULT_FOLDS,
        show_default=True,
        help="Folds of the guard's nested selection.",
    ),
    click.option(
        "--switches",
        default=None,
        metavar="NAME,...|none",
        help="The switches the study may flip (default: any the baseline's failures call "
        "for; none: keep the baseline's).",
    ),
    click.option(
        "--candidates",
        "candidate_specs",
        multiple=True,
        metavar="ROLE=ID,ID",
        help="Other models one role may be played by (the models stage). Repeatable.",
    ),
    click.option(
        "--candidates-all", default=None, metavar="ID,ID", help="Other models for every role."
    ),
    click.option(
        "--study", "study_name", default=None, help="Study name (default: from the options)."
    ),
    click.option(
        "--storage",
        default=None,
        help="File, sqlite:///PATH or postgresql://... (default: "
        "runs/compile/STUDY/study.journal).",
    ),
    click.option(
        "--limit",
        type=click.IntRange(2),
        default=None,
        help="Fit on N rows spread evenly over the examples (a quicker, smaller study).",
    ),
    click.option(
        "--test-limit",
        type=click.IntRange(1),
        default=None,
        help="Score N held-out rows, spread evenly over them.",
    ),
    click.option(
        "--test",
        "test_file",
        type=click.Path(path_type=Path, exists=True, dir_okay=False),
        default=None,
        help="Held-out JSONL rows scored before and after (never used to choose).",
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
        help="Optimizer effort (mipro, gepa, simba, bootstrap_rs): candidate sets, trials, "
        "metric calls or steps.",
    ),
)

#: What the demos hold.
_demo_options = option_group(
    click.option(
        "--max-demos",
        type=click.IntRange(0, 16),
        default=None,
        help="Demos each request is shown from the study's pool (default 3; 0: no demos), or "
        "how many --no-search keeps (default 2).",
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
        help="Only these roles keep demos (default: the study's planning roles and parameters; "
        "with --no-search, every role).",
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
        "--dev-fraction",
        type=click.FloatRange(0.05, 0.9),
        default=None,
        help=f"With --no-search: the share of rows kept for dev (default {DEV_FRACTION}).",
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
@_search_options
@_demo_options
@_run_options
@dataset_options
@json_option
def command(data_dir: Path | None, as_json: bool, **options: Any) -> None:
    """Fit a program to a benchmark or your examples; by default a study around the preset."""
    test_file: Path | None = options.pop("test_file")
    with open_dataset(options, options["benchmark_name"], allow_unlabelled=True) as dataset:
        if dataset is not None:
            _label_missing(dataset, options["teacher"], options["strategy"], options["api_base"])
        settings = make_settings(data_dir=data_dir)
        if options.pop("no_search"):
            _fixed_compile(dataset, settings, as_json, test_file, options)
            return
        # NOTE: some DSPy optimizers print their progress; stdout is kept for the results.
        with contextlib.redirect_stdout(sys.stderr):
            outcome, path = _study(dataset, settings, test_file, options)
    if as_json:
        echo_json({**outcome.to_json(), "artifact": str(path)})
        return
    for line in outcome.lines():
        click.echo(line)
    click.echo(f"wrote {path}")


def _fixed_compile(
    dataset: Dataset | None,
    settings: Settings,
    as_json: bool,
    test_file: Path | None,
    options: dict[str, Any],
) -> None:
    """``--no-search``: one configuration, one optimizer, dev scores before and after."""
    if test_file is not None:
        raise ConfigError("--test goes with the compile study; with --no-search give --dev")
    for name in _STUDY_OPTIONS:
        options.pop(name)
    if options["dev_fraction"] is None:
        options["dev_fraction"] = DEV_FRACTION
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


#: Options of the compile study that ``--no-search`` does not take.
_STUDY_OPTIONS = (
    "timeout",
    "stages",
    "folds",
    "switches",
    "candidate_specs",
    "candidates_all",
    "study_name",
    "storage",
    "limit",
    "test_limit",
)


def _study(
    dataset: Dataset | None, settings: Settings, test_file: Path | None, options: dict[str, Any]
) -> tuple[CompileOutcome, Path]:
    """Run the compile study the options describe and write its program."""
    from freyr_dspy.artifacts import benchmark_data_dir, save
    from freyr_dspy.benchmark import EvalOptions
    from freyr_dspy.compiling import fit_program
    from freyr_dspy.program import FreyrProgram

    _refuse_fixed_only(options)
    bench = dataset.benchmark if dataset else get_benchmark(str(options["benchmark_name"]))
    extra = parse_benchmark_options(options["extra_specs"])
    if dataset is not None:
        extra = {**extra, "dataset": dataset.digest}
    eval_options = EvalOptions(
        data_dir=benchmark_data_dir(settings), mode=options["mode"] or "bootstrap", extra=extra
    )
    baseline = FreyrProgram.for_model(
        benchmark=bench,
        eval_options=eval_options,
        strategy=options["strategy"],
        models=options["model_specs"],
        sampling=options["sampling_specs"],
        api_base=options["api_base"],
        cache=settings.cache,
        default_model=settings.default_model,
    )
    with compile_progress() as progress:
        outcome = fit_program(
            baseline,
            bench,
            options=eval_options,
            project=settings,
            settings=_compile_settings(baseline, options),
            test=_held_out(dataset, test_file, options["test_limit"]),
            progress=progress,
        )
    name = dataset.examples.stem if dataset is not None else bench.name
    path = options["out"] or settings.compiled_dir / f"{name}.json"
    return outcome, save(outcome.program, path, outcome.meta)


def _refuse_fixed_only(options: dict[str, Any]) -> None:
    """Refuse the options that only a ``--no-search`` compile takes, with what to do instead."""
    if options["start"] is not None:
        raise ConfigError("--start stacks on one artifact: give --no-search with it")
    if options["dev_fraction"] is not None:
        raise ConfigError("--dev-fraction goes with --no-search: the study scores every row")
    if options["optimizer"] is not None:
        raise ConfigError(
            "--optimizer goes with --no-search: the study builds its own demo pools "
            "(--max-demos, --demo-roles)"
        )


def _compile_settings(baseline: Any, options: dict[str, Any]) -> CompileSettings:
    """The study's settings from the options, around ``baseline``'s strategy."""
    from freyr_dspy.compiling import CompileSettings, switch_names
    from freyr_dspy.strategies import strategy_label

    label = strategy_label(baseline.strategy)
    switches = options["switches"]
    searched: tuple[str, ...] | None = None
    if switches is not None and switches.strip().lower() == "none":
        searched = ()
    elif switches is not None:
        searched = _csv(switches)
        unknown = sorted(set(searched) - set(switch_names(label)))
        if unknown:
            raise ConfigError(
                f"--switches: {', '.join(unknown)} not switches of {label}; it has "
                f"{', '.join(switch_names(label))}"
            )
    roles = _csv(options["demo_roles"]) or None
    if roles is not None:
        unknown = sorted(set(roles) - set(baseline.role_names))
        if unknown:
            raise ConfigError(
                f"--demo-roles: {', '.join(unknown)} not roles of {label}; it has "
                f"{', '.join(baseline.role_names)}"
            )
    return CompileSettings(
        minutes=options["timeout"],
        stages=_csv(options["stages"]),
        switches=searched,
        max_demos=3 if options["max_demos"] is None else options["max_demos"],
        demo_roles=roles,
        candidates=_candidate_models(baseline, options),
        folds=options["folds"],
        seed=options["seed"],
        limit=options["limit"],
        demo_maxlen=options["demo_maxlen"],
        keep_tool_text=options["keep_tool_text"],
        demo_omit=_csv(options["demo_omit"]),
        storage=options["storage"],
        study_name=options["study_name"],
    )


def _candidate_models(baseline: Any, options: dict[str, Any]) -> dict[str, list[RoleModel]]:
    """``--candidates`` as role -> models, each with the sampling the role has now."""
    from freyr_dspy.search import ALL_ROLES, parse_candidates

    lists = parse_candidates(options["candidate_specs"], options["candidates_all"])
    everyone = lists.pop(ALL_ROLES, ())
    found: dict[str, list[RoleModel]] = {}
    for role, current in baseline.assignment.items():
        ids = lists.get(role, everyone)
        found[role] = [RoleModel(model=i, sampling=current.sampling) for i in ids]
    unknown = sorted(set(lists) - set(baseline.assignment))
    if unknown:
        raise ConfigError(f"--candidates: {', '.join(unknown)} not roles of the program")
    return {role: models for role, models in found.items() if models}


def _held_out(
    dataset: Dataset | None, test_file: Path | None, limit: int | None
) -> list[Any] | None:
    """The rows scored before and after: ``--test``, and ``--dev`` rows (never chosen on)."""
    if test_file is not None and dataset is None:
        raise ConfigError("--test goes with --examples (rows over the same tools)")
    if dataset is None:
        return None
    from freyr_dspy.benchmark import spread
    from freyr_dspy.datasets import ConversationBenchmark, read_conversations, read_rows

    bench = dataset.benchmark
    if isinstance(bench, ConversationBenchmark):  # held-out turns, each with its earlier ones
        held = read_conversations(test_file, bench.apps) if test_file is not None else []
        return spread(bench.turn_episodes(held), limit) or None
    rows = list(bench.dev_rows or [])
    if test_file is not None:
        rows += read_rows(test_file, dataset.boxes)
    return spread([bench.episode(row) for row in rows], limit) or None


def _label_missing(
    dataset: Dataset, teacher: str | None, strategy: str | None, api_base: str | None
) -> None:
    """Label the example rows without calls with ``--teacher`` (rows it cannot label go)."""
    from freyr_dspy.datasets import ToolCallBenchmark

    if not isinstance(dataset.benchmark, ToolCallBenchmark):
        return  # every turn of a conversation says its calls
    unlabelled = [r for r in dataset.benchmark.rows if not r.example.labelled]
    if not unlabelled:
        return
    if teacher is None:
        raise ConfigError(
            f"{len(unlabelled)} example row(s) have no calls (e.g. {unlabelled[0].where}): "
            "give --teacher MODEL to label them, or label them first with freyr label"
        )
    from freyr_dspy.cli._label_cmd import teacher_program
    from freyr_dspy.datasets import label_rows

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
    optimizer: str | None,
    teacher: str | None,
    reflection: str | None,
    budget: int | None,
    max_demos: int | None,
    demo_maxlen: int | None,
    demo_roles: str | None,
    demo_omit: str | None,
    seed: int,
    extra_specs: tuple[str, ...],
    out: Path | None,
    **job: Any,
) -> CompileJob:
    """The compile the options describe."""
    if optimizer is not None and optimizer not in OPTIMIZER_NAMES:
        raise ConfigError(
            f"--optimizer {optimizer!r}: --no-search runs one of {', '.join(OPTIMIZER_NAMES)}"
        )
    config = OptimizerConfig.model_validate(
        dict(
            name=optimizer or "labeled",
            budget=budget,
            teacher=teacher,
            reflection=reflection,
            seed=seed,
            max_demos=2 if max_demos is None else max_demos,
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
