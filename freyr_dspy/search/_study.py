"""``search_assignments``: an Optuna study over which model plays which role, and how.

The study is resumable by construction: its name is derived from the search space, the
objectives and the episodes (so re-running the same command finds it), ``n_trials`` is the
*total* the study should reach (a resumed run only runs what is missing), and trials a
stopped worker left behind are failed and their configurations queued again. Workers on
several machines share one study through an RDB URL; each stops when the shared total is met.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions, get_benchmark, spread
from freyr_dspy.errors import ConfigError, UnknownRoleError
from freyr_dspy.program import FreyrProgram, ProgramSpec
from freyr_dspy.search._demos import hold_out, labeled_demo_fn, step_ids
from freyr_dspy.search._objective import LOST_REASONS, OBJECTIVES, DemoFn, Objective
from freyr_dspy.search._report import write_report
from freyr_dspy.search._result import SearchResult, collect_result
from freyr_dspy.search._space import ALL_ROLES, SearchSpace, baseline, space_digest
from freyr_dspy.settings import Settings
from freyr_dspy.studies import (
    EvaluationCache,
    fail_dead_local_trials,
    open_storage,
    redact,
    storage_url,
)

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

__all__ = [
    "CACHE_DIR",
    "enqueue",
    "evaluation_inputs",
    "load_episodes",
    "prepare_study",
    "search_assignments",
    "spread",
    "validate_space",
    "with_benchmark_roles",
]

logger = logging.getLogger(__name__)

Callback = Callable[[Any, Any], None]

#: Evaluations already paid for, shared by every study of the project.
CACHE_DIR = Path("runs") / "search" / "cache"

#: The user attribute of a queued trial that holds its parameters (``enqueue``).
QUEUED_PARAMS = "queued_params"


def search_assignments(
    benchmark: Benchmark | str,
    candidates: Mapping[str, Sequence[str]] | SearchSpace,
    *,
    n_trials: int,
    seed: int = 0,
    storage: str | Path | None = None,
    study_name: str | None = None,
    objectives: Sequence[str] = ("accuracy", "tokens"),
    jobs: int = 1,
    split: str = "dev",
    episodes: Sequence[Episode] | None = None,
    options: EvalOptions | None = None,
    settings: Settings | None = None,
    out_dir: Path | None = None,
    cache: bool = True,
    callbacks: Sequence[Callback] = (),
    demo_fn: DemoFn | None = None,
    progress: bool = False,
    report: bool = True,
) -> SearchResult:
    """Search role -> model assignments (and sampling, strategy, retries, demos).

    Args:
        benchmark: a ``Benchmark`` or a registered benchmark name.
        candidates: role -> candidate model ids (key ``"*"``: every other role), or a full
            ``SearchSpace``.
        n_trials: the total number of finished trials the study should have.
        seed: seeds the TPE sampler and the LMs' sampling.
        storage: a file path, ``journal:PATH``, ``sqlite:///PATH`` or an RDB URL; default
            ``<out_dir>/study.journal``.
        study_name: default ``<benchmark>-<hash of space, objectives and episodes>``.
        objectives: from ``accuracy`` (max), ``tokens`` (min), ``latency`` (min).
        jobs: trials run at once in this process (threads; in-process models serialise).
        split: ``dev`` (the project's trainsets: choosing a configuration never looks at
            test data) or ``test`` (the benchmark's test episodes); ``options.limit`` cuts it.
        episodes: what each configuration runs on, instead of ``split``.
        options: passed to ``benchmark.make_program``.
        settings: project directories and defaults.
        out_dir: default home of the study file; default ``runs/search/<study>``.
        cache: reuse evaluations of configurations already run (``runs/search/cache``
            under the project directory).
        callbacks: extra Optuna callbacks ``(study, frozen_trial)``.
        demo_fn: adds few-shot demos when the space searches ``num_demos``.
        progress: show Optuna's progress bar.
        report: write ``report.json``, CSVs and HTML plots into ``out_dir``.

    Returns:
        The trials, the Pareto front and the parameter importances.

    Raises:
        ConfigError: for unknown objectives, roles, strategies or models, no episodes, or a
            study of the same name built for another space.
    """
    settings = settings or Settings()
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    space = as_space(candidates, seed=seed, default_model=settings.default_model)
    objectives = check_objectives(objectives)
    options = options or EvalOptions(data_dir=settings.data_dir or Path())
    space = with_benchmark_roles(space, bench, options)
    validate_space(space)
    episodes, demo_fn = evaluation_inputs(
        bench, space, settings, options, episodes=episodes, split=split, demo_fn=demo_fn
    )
    name = study_name or default_study_name(bench.name, space, objectives, episodes)
    out = out_dir or settings.project_dir / "runs" / "search" / name
    url = storage_url(storage or out / "study.journal")
    fingerprint = {"benchmark": bench.name, "episodes": [e.id for e in episodes]}
    study = open_study(
        url, name, objectives, space, seed=seed, n_trials=n_trials, fingerprint=fingerprint
    )
    prepare_study(study, space)
    evaluations = EvaluationCache(settings.project_dir / CACHE_DIR if cache else None)
    objective = Objective(
        bench,
        space,
        episodes,
        options=options,
        objectives=objectives,
        cache=evaluations,
        demo_fn=demo_fn,
    )
    run_trials(study, objective, n_trials, jobs=jobs, callbacks=callbacks, progress=progress)
    result = collect_result(
        study, objectives, storage=redact(url), out_dir=out, cache_hits=evaluations.hits
    )
    return replace(result, files=write_report(result, study, out)) if report else result


def evaluation_inputs(
    benchmark: Benchmark,
    space: SearchSpace,
    settings: Settings,
    options: EvalOptions,
    *,
    episodes: Sequence[Episode] | None,
    split: str,
    demo_fn: DemoFn | None,
) -> tuple[list[Episode], DemoFn | None]:
    """The episodes to evaluate on, and the demo provider when ``num_demos`` is searched.

    With demos searched on the dev split, a seeded half of the dev episodes is held out for
    evaluation and the other half feeds the demos; ``options.limit`` then picks from the
    evaluated half, so a small search still draws demos from the whole other half.

    Raises:
        ConfigError: when there are no episodes.
    """
    searches_demos = space.num_demos[1] > 0
    if episodes is None:
        episodes = load_episodes(benchmark, settings, replace(options, limit=None), split)
        if searches_demos and split == "dev" and demo_fn is None:
            episodes = hold_out(episodes, seed=space.seed or 0)
        episodes = spread(episodes, options.limit)
    if not episodes:
        raise ConfigError(f"benchmark {benchmark.name!r} gave no episodes to evaluate")
    if searches_demos and demo_fn is None:
        demo_fn = labeled_demo_fn(
            benchmark, settings, options, exclude=step_ids(episodes), seed=space.seed or 0
        )
    return list(episodes), demo_fn


def as_space(
    candidates: Mapping[str, Sequence[str]] | SearchSpace, *, seed: int, default_model: str
) -> SearchSpace:
    """Turn a candidate mapping into a default ``SearchSpace`` (a space passes through)."""
    if isinstance(candidates, SearchSpace):
        return candidates
    lists = {role: tuple(dict.fromkeys(ids)) for role, ids in candidates.items()}
    return SearchSpace(candidates=lists, seed=seed, default_model=default_model)


def with_benchmark_roles(
    space: SearchSpace, benchmark: Benchmark, options: EvalOptions
) -> SearchSpace:
    """``space`` with each strategy's roles as ``benchmark`` builds its program.

    A benchmark may build a strategy with settings of its own (NLT runs ``gated`` around
    ``nlt``), and the roles follow the settings: only these roles get models.
    """
    roles = {
        label: FreyrProgram.from_spec(
            ProgramSpec(strategy=label), benchmark=benchmark, eval_options=options
        ).role_names
        for label in space.strategies
    }
    return replace(space, strategy_roles=roles)


def check_objectives(objectives: Sequence[str]) -> tuple[str, ...]:
    """Validate objective names (no duplicates, at least one).

    Raises:
        ConfigError: for an unknown or repeated objective.
    """
    from freyr_dspy.errors import UnknownNameError

    names = tuple(objectives)
    for name in names:
        if name not in OBJECTIVES:
            raise UnknownNameError("objective", name, OBJECTIVES)
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"objectives must be distinct and non-empty, got {list(names)}")
    return names


def validate_space(space: SearchSpace) -> None:
    """Fail before the first trial on unknown strategies, roles or model ids.

    Raises:
        UnknownNameError: for an unknown strategy.
        UnknownRoleError: for candidates of a role no searched strategy has.
        UnknownModelError: for a model id no backend understands.
    """
    from freyr_dspy.backends import make_lm

    roles = {r for s in space.strategies for r in space.roles_of(s)}
    for role in space.candidates:
        if role != ALL_ROLES and role not in roles:
            raise UnknownRoleError(role, sorted(roles))
    for model in space.all_models():
        make_lm(model)  # cheap: engines load their weights on first call


def load_episodes(
    benchmark: Benchmark, settings: Settings, options: EvalOptions, split: str = "dev"
) -> list[Episode]:
    """The episodes a search evaluates on: ``dev`` (the project's trainsets) or ``test``.

    ``dev`` is the default so that choosing a configuration never looks at test data.
    ``options.limit`` picks that many episodes spread evenly over the split.

    Raises:
        ConfigError: for another split name.
    """
    if split == "dev":
        episodes = benchmark.train_episodes(settings.trainsets_dir, options)
    elif split == "test":
        episodes = benchmark.episodes(options)
    else:
        raise ConfigError(f"unknown split {split!r}; expected dev or test")
    return spread(episodes, options.limit)


def default_study_name(
    benchmark: str, space: SearchSpace, objectives: Sequence[str], episodes: Sequence[Episode]
) -> str:
    """``<benchmark>-<hash>``: the same command finds the same study, another one a new one."""
    return f"{benchmark}-{space_digest(space, list(objectives), [e.id for e in episodes])}"


def open_study(
    url: str,
    name: str,
    objectives: Sequence[str],
    space: SearchSpace,
    *,
    seed: int,
    n_trials: int,
    fingerprint: Mapping[str, Any],
) -> Study:
    """Create or load the study (failing trials its dead local workers left running).

    A study built for another space, objectives or episodes is refused: Optuna cannot
    sample a categorical whose choices changed, and mixed trials would not compare.

    Raises:
        ConfigError: when a study of that name exists with other objectives or space.
    """
    import optuna

    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=_startup_trials(n_trials))
    directions = [OBJECTIVES[o] for o in objectives]
    storage = open_storage(url)
    try:
        study = optuna.create_study(
            storage=storage,
            study_name=name,
            sampler=sampler,
            directions=directions,
            load_if_exists=True,
        )
    except ValueError as exc:  # an existing study with other directions
        raise ConfigError(f"study {name!r} exists with other objectives: {exc}") from exc
    fail_dead_local_trials(storage, name)
    description = {"objectives": list(objectives), "space": space.describe(), **fingerprint}
    stored = study.user_attrs.get("freyr")
    if stored is None:
        study.set_user_attr("freyr", description)
    elif stored != _jsonable(description):
        raise ConfigError(
            f"study {name!r} in {redact(url)} was created for another search "
            f"(objectives, space, benchmark or episodes differ); pass a new --study name"
        )
    return study


def prepare_study(study: Study, space: SearchSpace) -> None:
    """Queue again the trials a stopped worker lost, and the baseline (once, first)."""
    lost = [t for t in study.get_trials(deepcopy=False) if _is_lost(t)]
    kept = [_params(t) for t in study.get_trials(deepcopy=False) if not _is_lost(t)]
    for trial in lost:
        if trial.params and trial.params not in kept:
            enqueue(study, trial.params, baseline=bool(trial.user_attrs.get("baseline")))
            kept.append(trial.params)
    _, params = baseline(space)
    enqueue(study, params, baseline=True, skip_if_exists=True)


def enqueue(
    study: Study,
    params: dict[str, Any],
    *,
    baseline: bool = False,
    skip_if_exists: bool = False,
) -> None:
    """Queue a configuration, recording its parameters where a waiting trial shows them.

    A queued trial has no ``params`` until a worker takes it; ``QUEUED_PARAMS`` lets
    ``prepare_study`` see that a lost configuration is queued already.
    """
    marks: dict[str, Any] = {QUEUED_PARAMS: params, **({"baseline": True} if baseline else {})}
    study.enqueue_trial(params, user_attrs=marks, skip_if_exists=skip_if_exists)


def run_trials(
    study: Study,
    objective: Objective,
    n_trials: int,
    *,
    jobs: int = 1,
    callbacks: Sequence[Callback] = (),
    progress: bool = False,
) -> int:
    """Run trials until the study has ``n_trials`` finished ones; return how many ran here.

    Crashed or failed configurations are recorded as failed trials and the study goes on.
    """
    done = finished_trials(study)
    remaining = n_trials - done
    if remaining <= 0:
        logger.info("study %s already has %d finished trials", study.study_name, done)
        return 0

    def stop_at_total(study: Study, _trial: FrozenTrial) -> None:
        # NOTE: other workers add trials too; stop as soon as the shared total is reached.
        if finished_trials(study) >= n_trials:
            study.stop()

    study.optimize(
        objective,
        n_trials=remaining,
        n_jobs=jobs,
        catch=(Exception,),
        callbacks=[stop_at_total, *callbacks],
        show_progress_bar=progress,
    )
    return finished_trials(study) - done


def finished_trials(study: Study) -> int:
    """Trials that count toward the total: complete, or failed for a reason of their own."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
    return sum(1 for t in trials if not _is_lost(t))


def _is_lost(trial: FrozenTrial) -> bool:
    """A failed trial that said nothing (its worker died) or was cut short by a stop."""
    if trial.state.name != "FAIL":
        return False
    failure = trial.user_attrs.get("failure")
    return failure is None or failure in LOST_REASONS


def _params(trial: FrozenTrial) -> dict[str, Any]:
    """The configuration a trial runs: the queued one in full, even before it is suggested."""
    return dict(trial.user_attrs.get(QUEUED_PARAMS) or trial.params)


def _startup_trials(n_trials: int) -> int:
    # TPE's default of 10 random trials would leave a 12-trial search almost all random.
    return max(2, min(10, n_trials // 3))


def _jsonable(value: Any) -> Study:
    import json

    return json.loads(json.dumps(value))
