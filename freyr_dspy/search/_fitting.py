"""``fit_program``: everything ``freyr compile`` and ``freyr_dspy.compile`` do, in one call.

From a baseline program with its models (the model's preset, or what the user built) and a
benchmark's labelled rows: the folds, the program maker, the demo optimizers' fixed knobs, a
study named after what it fits, and the study itself (``compile_study``). ``artifact_meta``
then records the choice in the artifact, so a loaded program says how it was chosen.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from freyr_dspy.artifacts import ArtifactMeta, ArtifactScores, build_meta
from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions, step_example
from freyr_dspy.compiling._compiler import load_trainset, trainset_sha256
from freyr_dspy.compiling._job import demo_omit_fields
from freyr_dspy.compiling._optimizers import OptimizerConfig
from freyr_dspy.datasets import ToolCallBenchmark
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.program._spec import build_program, spec_of
from freyr_dspy.search._cache import EvaluationCache
from freyr_dspy.search._compile_study import CompileBudget, CompileOutcome, compile_study
from freyr_dspy.search._cross_validation import CrossValidation, ProgramMaker
from freyr_dspy.search._folds import DEFAULT_FOLDS, make_folds
from freyr_dspy.search._program_space import ProgramConfig, ProgramSpace
from freyr_dspy.search._storage import storage_url
from freyr_dspy.search._study import spread
from freyr_dspy.settings import Settings

__all__ = ["FitOptions", "fit_program"]


@dataclass(frozen=True)
class FitOptions:
    """How a compile study fits: folds, seed, the demos' fixed knobs, where the study lives.

    Args:
        folds: cross-validation folds.
        seed: seeds the folds, the sampler and the demo choice.
        teacher: the model that bootstraps demos (default: the student's own).
        demo_maxlen: cut demo input fields longer than this many characters.
        keep_tool_text: keep the tools' catalog and specs in a user's demos.
        demo_omit: input fields left out of every demo (e.g. ``tools``).
        reflection: the model that writes instructions, for ``gepa``/``mipro`` among the
            searched optimizers.
        optimizer_budget: effort of those optimizers (metric calls, trials) per fold.
        limit: use this many rows, spread evenly over the training rows (all when None).
        study_dir: the folder of the study and its rows' records.
        storage: the study's storage (default: a journal file in ``study_dir``).
        study_name: the study's name (default: from what it fits, so a rerun resumes).
        progress: show the progress bar (best score so far).
    """

    folds: int = DEFAULT_FOLDS
    seed: int = 0
    teacher: str | None = None
    demo_maxlen: int | None = None
    keep_tool_text: bool = False
    demo_omit: tuple[str, ...] = ()
    reflection: str | None = None
    optimizer_budget: int | None = None
    limit: int | None = None
    study_dir: Path | None = None
    storage: str | None = None
    study_name: str | None = None
    progress: bool = False


def fit_program(
    baseline: FreyrProgram,
    benchmark: Benchmark,
    space: ProgramSpace,
    *,
    options: EvalOptions,
    settings: Settings,
    budget: CompileBudget | None = None,
    fit: FitOptions | None = None,
    test: Sequence[Episode] | None = None,
    on_trial: Callable[[str], None] | None = None,
) -> CompileOutcome:
    """Run the compile study of ``baseline`` on ``benchmark``'s training rows.

    Args:
        baseline: the program a user already has, with its models (the study's first trial).
        benchmark: the training rows (``train_episodes``) and the score.
        space: what the study varies (its ``baseline`` is ``baseline``'s strategy label).
        options: the benchmark's options.
        settings: the project folders (the study lives under ``runs/compile``).
        budget: trials, time and pruning.
        fit: folds, seed, demo knobs and the study's storage.
        test: held-out rows, scored before and after, never used to choose.
        on_trial: called with one line per finished trial.

    Raises:
        ConfigError: too few rows, rows that are not standalone, an unusable storage.
    """
    fit = fit or FitOptions()
    rows = spread(training_rows(benchmark, settings, options), fit.limit)
    examples = {episode.id: step_example(episode.steps[0]) for episode in rows}
    folds = make_folds(rows, fit.folds, seed=fit.seed)
    data = trainset_sha256(list(examples.values()))
    context = _context(baseline, benchmark, data)
    name = fit.study_name or _study_name(benchmark, space, folds.order, context, fit.seed)
    home = (fit.study_dir or settings.project_dir / "runs" / "compile") / name
    cv = CrossValidation(
        benchmark=benchmark,
        episodes={episode.id: episode for episode in rows},
        examples=examples,
        folds=folds,
        make=program_maker(baseline, benchmark, options),
        optimizer=_optimizer(baseline, benchmark, fit),
        cache=EvaluationCache(home / "rows"),
        context=context,
    )
    outcome = compile_study(
        cv,
        space,
        budget=budget or CompileBudget(),
        storage=storage_url(fit.storage or home / "study.journal"),
        study_name=name,
        seed=fit.seed,
        progress=fit.progress,
        test=test,
        on_trial=on_trial,
    )
    own = benchmark if isinstance(benchmark, ToolCallBenchmark) else None
    meta = artifact_meta(
        outcome,
        benchmark=benchmark.name,
        options=options,
        any_toolbox=own is not None and own.tool_agnostic,
        trainset_sha256=data,
    )
    return replace(outcome, meta=meta)


def training_rows(benchmark: Benchmark, settings: Settings, options: EvalOptions) -> list[Episode]:
    """The benchmark's training steps as standalone one-step episodes, one per row.

    Raises:
        ConfigError: a later step without a start state of its own (see ``load_trainset``).
    """
    from freyr_dspy.compiling._compiler import dev_episodes

    episodes = dev_episodes(load_trainset(benchmark, settings, options))
    cases = {ep.id: ep.case for ep in benchmark.train_episodes(settings.trainsets_dir, options)}
    return [Episode(id=ep.id, case=cases.get(ep.id, ep.case), steps=ep.steps) for ep in episodes]


def program_maker(
    baseline: FreyrProgram, benchmark: Benchmark, options: EvalOptions
) -> ProgramMaker:
    """Build a configuration's program as ``baseline`` was built, with ``baseline``'s models.

    A role the baseline has no model for (``asks`` where it planned with ``intent``) gets the
    model most of its roles play.
    """
    spec = spec_of(baseline).model_copy(update={"options": None, "assignment": {}})
    models = dict(baseline.assignment)
    if not models:
        raise ConfigError("the program has no models; give it some before compiling it")
    most = Counter(models.values()).most_common(1)[0][0]

    def make(config: ProgramConfig) -> FreyrProgram:
        program = build_program(
            spec.model_copy(update={"strategy": config.strategy}),
            benchmark=benchmark,
            eval_options=options,
        )
        assignment = config.assignment or {r: models.get(r, most) for r in program.role_names}
        return program.apply_assignment(assignment)

    return make


def artifact_meta(
    outcome: CompileOutcome,
    *,
    benchmark: str,
    options: EvalOptions,
    any_toolbox: bool,
    trainset_sha256: str | None = None,
) -> ArtifactMeta:
    """The artifact's metadata: the program, the cross-validated scores and the study."""
    base, shipped = outcome.baseline, outcome.shipped
    config = outcome.config
    optimizer = (
        OptimizerConfig(name=config.optimizer, max_demos=config.demos)  # type: ignore[arg-type]
        if config.compiled
        else None
    )
    return build_meta(
        outcome.program,
        benchmark=benchmark,
        eval_mode=options.mode,
        eval_extra=dict(options.extra),
        optimizer=optimizer,
        trainset_sha256=trainset_sha256,
        n_train=outcome.n_rows,
        scores=ArtifactScores(
            before=round(base.accuracy, 4),
            after=round(shipped.accuracy, 4),
            dev_size=outcome.n_rows,
            tokens_per_request_before=round(base.tokens, 1),
            tokens_per_request_after=round(shipped.tokens, 1),
        ),
        search=outcome.to_json(),
        **({"toolbox": None} if any_toolbox else {}),
    )


def _optimizer(baseline: FreyrProgram, benchmark: Benchmark, fit: FitOptions) -> OptimizerConfig:
    """The demo optimizers' fixed knobs; a user's tools' text is left out of demos.

    Raises:
        ConfigError: ``demo_omit`` names a field no role takes.
    """
    own = isinstance(benchmark, ToolCallBenchmark) and not fit.keep_tool_text
    return OptimizerConfig(
        seed=fit.seed,
        teacher=fit.teacher,
        reflection=fit.reflection,
        budget=fit.optimizer_budget,
        demo_field_maxlen=fit.demo_maxlen,
        demo_omit=demo_omit_fields(baseline, fit.demo_omit, own),
    )


def _context(baseline: FreyrProgram, benchmark: Benchmark, data: str) -> dict[str, Any]:
    """What, besides configuration, fold and row, decides a row's record."""
    from freyr_dspy.artifacts._meta import freyr_version
    from freyr_dspy.evaluation import code_version

    spec = spec_of(baseline).model_dump(mode="json", exclude={"strategy", "options"})
    return {
        "benchmark": benchmark.name,
        "data": data,
        "program": spec,
        "models": {r: m.model_dump(mode="json") for r, m in sorted(baseline.assignment.items())},
        # the commit too: a record the code before a change made is not this code's record
        "version": f"{freyr_version()} {code_version()}",
    }


def _study_name(
    benchmark: Benchmark,
    space: ProgramSpace,
    rows: Sequence[str],
    context: dict[str, Any],
    seed: int,
) -> str:
    text = json.dumps([space.describe(), list(rows), context, seed], sort_keys=True, default=str)
    return f"compile-{benchmark.name}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
