"""``freyr search``: which model plays which role, with which sampling settings.

Thin: it parses the options into a ``SearchSpace``, runs ``search_assignments`` and renders
the Pareto front (stdout) and the report files (``--out``); ``--compile-best`` ships the winner.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from freyr_dspy.cli._common import (
    data_option,
    echo_json,
    json_option,
    make_settings,
    option_group,
)
from freyr_dspy.cli._dataset import Dataset, dataset_options, open_dataset

__all__ = []


#: The search space: sampling ranges, retries, demos.
_space_options = option_group(
    click.option(
        "--temperature",
        default="0,1",
        show_default=True,
        help="LOW,HIGH searched on a 0.1 grid, or 'off' (backend default).",
    ),
    click.option(
        "--top-p",
        default="0.5,1",
        show_default=True,
        help="LOW,HIGH searched on a 0.05 grid, or 'off'.",
    ),
    click.option(
        "--top-k",
        default="10,40,100",
        show_default=True,
        help="Choices for backends with top-k (embedded, Ollama), or 'off'.",
    ),
    click.option(
        "--max-retries",
        default="0,3",
        show_default=True,
        help="LOW,HIGH retries of a failed tool call.",
    ),
    click.option(
        "--num-demos",
        default="0",
        show_default=True,
        help="LOW,HIGH gold demos per role (from trainset rows not evaluated).",
    ),
    click.option(
        "--max-tokens",
        type=click.IntRange(1),
        help="Output cap of every role's LM (fixed; default: the backend's).",
    ),
    click.option(
        "--shared-sampling",
        is_flag=True,
        help="One temperature/top-p/top-k for all roles (a smaller space).",
    ),
)


#: The study: trials, objectives, storage, data, report, and shipping the winner.
_run_options = option_group(
    click.option(
        "--trials",
        default=12,
        show_default=True,
        type=click.IntRange(1),
        help="Total finished trials the study should have (resumes count).",
    ),
    click.option(
        "--objectives",
        default="accuracy,tokens",
        show_default=True,
        help="From accuracy (max), tokens (min), latency (min).",
    ),
    click.option(
        "--storage",
        help="File, journal:PATH, sqlite:///PATH or postgresql://... (default: OUT/study.journal).",
    ),
    click.option("--study", "study_name", help="Study name (default: from the options)."),
    click.option("--seed", type=int, help="Sampler and LM seed (default: FREYR_SEED or 0)."),
    click.option(
        "--jobs",
        default=1,
        show_default=True,
        type=click.IntRange(1),
        help="Trials at once in this process; run more processes to scale.",
    ),
    click.option(
        "--split",
        type=click.Choice(["dev", "test"]),
        default="dev",
        show_default=True,
        help="Evaluate on the trainsets (dev) or test data.",
    ),
    click.option("--limit", type=click.IntRange(1), help="At most N episodes."),
    data_option,
    click.option(
        "--option",
        "extra",
        multiple=True,
        metavar="KEY=VALUE",
        help="Benchmark-specific option (e.g. prompt=paper). Repeatable.",
    ),
    click.option(
        "--out",
        type=click.Path(path_type=Path, file_okay=False),
        help="Report folder (default: runs/search/STUDY).",
    ),
    click.option("--no-cache", is_flag=True, help="Evaluate repeated configurations again."),
    click.option("--compile-best", is_flag=True, help="Compile the best trial to compiled/."),
    click.option(
        "--optimizer",
        default="labeled",
        show_default=True,
        help="Optimizer used by --compile-best.",
    ),
)


#: What the search chooses from: the models per role and the strategies.
_candidate_options = option_group(
    click.option("--benchmark", default=None, help="Registered benchmark name."),
    click.option(
        "--candidates",
        "candidate_specs",
        multiple=True,
        metavar="ROLE=ID,ID",
        help="Candidate models of one role. Repeatable.",
    ),
    click.option("--candidates-all", metavar="ID,ID", help="Candidates of every other role."),
    click.option(
        "--strategy",
        default="freyr",
        show_default=True,
        help="Comma-separated strategies to choose from.",
    ),
)


@click.command("search")
@_candidate_options
@_space_options
@_run_options
@dataset_options
@json_option
def command(benchmark: str | None, **values: Any) -> None:
    """Search role -> model assignments with Optuna; print the Pareto front.

    On a benchmark or on your tools and examples (--tools ... --examples ...). Re-running
    the same command resumes the study up to --trials. Workers on several machines share
    one study with --storage postgresql://USER:PASS@HOST/DB --study NAME.
    """
    with open_dataset(values, benchmark) as dataset:
        _search(dataset, benchmark, **values)


def _search(
    dataset: Dataset | None,
    benchmark: str | None,
    *,
    candidate_specs: tuple[str, ...],
    candidates_all: str | None,
    strategy: str,
    as_json: bool,
    **values: Any,
) -> None:
    from freyr_dspy.benchmarks import EvalOptions, get_benchmark
    from freyr_dspy.search import format_table, search_assignments

    settings = make_settings(data_dir=values["data_dir"], seed=values["seed"])
    bench = dataset.benchmark if dataset else get_benchmark(str(benchmark))
    extra = _extra(values["extra"])
    if dataset is not None:
        extra["dataset"] = dataset.digest  # cached evaluations of other files do not count
    options = EvalOptions(data_dir=_data_dir(settings), limit=values["limit"], extra=extra)
    space = _space(
        candidate_specs, candidates_all, strategy, settings.seed, settings.default_model, values
    )
    result = search_assignments(
        bench,
        space,
        n_trials=values["trials"],
        seed=settings.seed,
        storage=values["storage"],
        study_name=values["study_name"],
        objectives=[o.strip() for o in values["objectives"].split(",") if o.strip()],
        jobs=values["jobs"],
        split=values["split"],
        options=options,
        settings=settings,
        out_dir=values["out"],
        cache=not values["no_cache"],
        progress=sys.stderr.isatty(),
    )
    data = result.to_json()
    if values["compile_best"]:
        data["compiled"] = _compile_best(result, bench, settings, options, values["optimizer"])
    if as_json:
        echo_json(data)
    else:
        click.echo(format_table(result))
    click.echo(f"report: {result.out_dir}", err=True)


def _space(
    specs: tuple[str, ...],
    all_ids: str | None,
    strategies: str,
    seed: int,
    default_model: str,
    values: dict[str, Any],
) -> Any:
    from freyr_dspy.search import SearchSpace, parse_bounds, parse_candidates, parse_numbers

    top_k = parse_numbers(values["top_k"], "top-k")
    retries = parse_bounds(values["max_retries"], "max-retries") or (3, 3)
    demos = parse_bounds(values["num_demos"], "num-demos") or (0, 0)
    return SearchSpace(
        candidates=parse_candidates(specs, all_ids),
        strategies=tuple(s.strip() for s in strategies.split(",") if s.strip()),
        temperature=parse_bounds(values["temperature"], "temperature"),
        top_p=parse_bounds(values["top_p"], "top-p"),
        top_k=tuple(int(k) for k in top_k) if top_k else None,
        max_retries=(int(retries[0]), int(retries[1])),
        num_demos=(int(demos[0]), int(demos[1])),
        shared_sampling=values["shared_sampling"],
        max_tokens=values["max_tokens"],
        default_model=default_model,
        seed=seed,
    )


def _compile_best(
    result: Any, bench: Any, settings: Any, options: Any, optimizer: str
) -> dict[str, Any]:
    from freyr_dspy.search import compile_best

    artifact = compile_best(result, bench, settings=settings, options=options, optimizer=optimizer)
    dev_score = round(artifact.report.after.accuracy, 4)
    click.echo(
        f"compiled the best trial into {artifact.path} (dev score {dev_score:.3f})", err=True
    )
    return {"path": str(artifact.path), "dev_score": dev_score}


def _data_dir(settings: Any) -> Path:
    from freyr_dspy.errors import ConfigError

    try:
        path: Path = settings.resolve_data_dir()
    except ConfigError:
        # NOTE: dev episodes and built-in benchmarks need no data; the others say what is missing
        return settings.data_dir or Path("benchmark-data-not-found")
    return path


def _extra(pairs: tuple[str, ...]) -> dict[str, Any]:
    from freyr_dspy.errors import ConfigError

    extra: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad --option {pair!r}; expected KEY=VALUE")
        extra[key.strip()] = value.strip()
    return extra
