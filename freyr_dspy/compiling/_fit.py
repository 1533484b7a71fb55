"""``fit_program``: everything ``freyr compile`` and ``freyr_dspy.compile`` do, in one call.

From a baseline program with its models (the model's preset, or what the user built) and a
benchmark's labelled rows: the rows as the compile sees them, the folds, the program maker,
the demos' fixed knobs, the study named after what it fits, and the study itself
(``compile_study``). ``artifact_meta`` then records the choice in the artifact, so a loaded
program says how it was chosen.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from freyr_dspy.artifacts import ArtifactMeta, ArtifactScores, build_meta
from freyr_dspy.backends import engines_of, replaying
from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions, spread, step_example
from freyr_dspy.compiling._candidates import Candidate
from freyr_dspy.compiling._compiler import trainset_sha256
from freyr_dspy.compiling._guard import make_folds
from freyr_dspy.compiling._job import demo_omit_fields
from freyr_dspy.compiling._optimizers import OptimizerConfig
from freyr_dspy.compiling._outcome import CompileOutcome, RecordLog
from freyr_dspy.compiling._rows import ProgramMaker, RowScorer, TrainingRow
from freyr_dspy.compiling._settings import CompileSettings
from freyr_dspy.compiling._study import Progress, compile_study
from freyr_dspy.compiling._trials import TrialBook
from freyr_dspy.datasets import ToolCallBenchmark
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import Settings
from freyr_dspy.strategies import strategy_label
from freyr_dspy.studies import EvaluationCache, storage_url

__all__ = ["fit_program", "training_episodes"]

#: Held-out rows get this prefix in the scorer, so a test row never shares a training id.
_HELD_OUT = "held-out:"


def fit_program(
    baseline: FreyrProgram,
    benchmark: Benchmark,
    *,
    options: EvalOptions,
    project: Settings,
    settings: CompileSettings | None = None,
    test: Sequence[Episode] | None = None,
    progress: Progress | None = None,
) -> CompileOutcome:
    """Run the compile study of ``baseline`` on ``benchmark``'s training rows.

    Args:
        baseline: the program a user already has, with its models (the study's baseline).
        benchmark: the training rows (``train_episodes``) and the score.
        options: the benchmark's options.
        project: the project folders (the study lives under ``runs/compile``).
        settings: the budget and what the study may try.
        test: held-out rows, scored before and after, never used to choose.
        progress: told after every scored row.

    Raises:
        ConfigError: too few rows, rows that are not standalone, an unusable storage.
    """
    settings = settings or CompileSettings()
    episodes = spread(training_episodes(benchmark, project, options), settings.limit)
    rows = [TrainingRow.of(episode) for episode in episodes]
    examples = {episode.id: step_example(episode.steps[0]) for episode in episodes}
    folds = make_folds(rows, settings.folds, seed=settings.seed)
    data = trainset_sha256(list(examples.values()))
    context = _context(baseline, benchmark)
    described = [settings.describe(), list(folds.order), context, data]
    name = settings.study_name or _study_name(benchmark, baseline, described)
    home = (settings.study_dir or project.project_dir / "runs" / "compile") / name
    held = {f"{_HELD_OUT}{episode.id}": episode for episode in test or ()}
    scorer = RowScorer(
        benchmark=benchmark,
        episodes={**{episode.id: episode for episode in episodes}, **held},
        examples=examples,
        make=program_maker(baseline, benchmark, options),
        optimizer=_demo_knobs(baseline, benchmark, settings),
        # NOTE: one cache for every compile of the project: a record is keyed by all that
        # decides it, so other studies (seeds, other training rows) reuse what they share.
        cache=EvaluationCache(home.parent / "rows"),
        context=context,
        data=data,
    )
    book = TrialBook(
        storage_url(settings.storage or home / "study.journal"),
        name,
        {"settings": settings.describe(), "rows": list(folds.order)},
    )
    # NOTE: the in-process engines are shared by every candidate's program (one per model),
    # so the memo attached to the baseline's replays calls for all of them.
    engines = engines_of(p.lm for p in baseline.predictors())
    records = home / "records.jsonl"
    log = RecordLog(records, shown=_shown_path(records, project.project_dir))
    with replaying(engines, scorer.memo):
        outcome = compile_study(
            scorer,
            rows,
            folds,
            Candidate(strategy=strategy_label(baseline.strategy)),
            book=book,
            settings=settings,
            roles=baseline.role_names,
            baseline_models=dict(baseline.assignment),
            log=log,
            progress=progress,
            test=tuple(held),
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


def training_episodes(
    benchmark: Benchmark, project: Settings, options: EvalOptions
) -> list[Episode]:
    """The benchmark's training steps as standalone one-step episodes, one per row.

    Raises:
        ConfigError: a later step without a start state of its own.
    """
    found = []
    for episode in benchmark.train_episodes(project.trainsets_dir, options):
        for index, step in enumerate(episode.steps):
            if index > 0 and step.start_state is None:
                raise ConfigError(
                    f"training step {step.id!r} of {benchmark.name} has no start_state; "
                    "training steps must be standalone"
                )
            one = len(episode.steps) == 1
            found.append(
                Episode(
                    id=episode.id if one else step.id,
                    case=episode.case,
                    steps=(step,),
                    toolbox=episode.toolbox,
                )
            )
    return found


def program_maker(
    baseline: FreyrProgram, benchmark: Benchmark, options: EvalOptions
) -> ProgramMaker:
    """Build a candidate's program as ``baseline`` was built, with ``baseline``'s models.

    A role the baseline has no model for (``asks`` where it planned with ``intent``) gets the
    model most of its roles play.
    """
    spec = baseline.spec().model_copy(update={"options": None, "assignment": {}})
    models = dict(baseline.assignment)
    if not models:
        raise ConfigError("the program has no models; give it some before compiling it")
    most = Counter(models.values()).most_common(1)[0][0]

    def make(candidate: Candidate) -> FreyrProgram:
        program = FreyrProgram.from_spec(
            spec.model_copy(update={"strategy": candidate.strategy}),
            benchmark=benchmark,
            eval_options=options,
        )
        chosen = candidate.assignment or models
        return program.apply_assignment({r: chosen.get(r, most) for r in program.role_names})

    return make


def artifact_meta(
    outcome: CompileOutcome,
    *,
    benchmark: str,
    options: EvalOptions,
    any_toolbox: bool,
    trainset_sha256: str | None = None,
) -> ArtifactMeta:
    """The artifact's metadata: the program, the scores on the rows and the study."""
    base, shipped = outcome.baseline, outcome.shipped
    pool = outcome.candidate.pool
    optimizer = OptimizerConfig(name="nearest", max_demos=pool.k) if pool else None
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


def _demo_knobs(
    baseline: FreyrProgram, benchmark: Benchmark, settings: CompileSettings
) -> OptimizerConfig:
    """The demos' fixed knobs; a user's tools' text is left out of demos.

    Raises:
        ConfigError: ``demo_omit`` names a field no role takes.
    """
    own = isinstance(benchmark, ToolCallBenchmark) and not settings.keep_tool_text
    return OptimizerConfig(
        name="nearest",
        seed=settings.seed,
        demo_field_maxlen=settings.demo_maxlen,
        demo_omit=demo_omit_fields(baseline, settings.demo_omit, own),
    )


def _context(baseline: FreyrProgram, benchmark: Benchmark) -> dict[str, Any]:
    """What, besides the candidate, the row and a pool's rows, decides a row's record."""
    from freyr_dspy.artifacts import freyr_version
    from freyr_dspy.evaluation import source_digest

    spec = baseline.spec().model_dump(mode="json", exclude={"strategy", "options"})
    return {
        "benchmark": benchmark.name,
        "program": spec,
        "models": {r: m.model_dump(mode="json") for r, m in sorted(baseline.assignment.items())},
        # the code too: a record the code before a change made is not this code's record
        "version": f"{freyr_version()} {source_digest()}",
    }


def _study_name(benchmark: Benchmark, baseline: FreyrProgram, described: list[Any]) -> str:
    """``compile-<benchmark>-<hash>``: the same compile finds its study, another a new one."""
    text = json.dumps([strategy_label(baseline.strategy), *described], sort_keys=True, default=str)
    return f"compile-{benchmark.name}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def _shown_path(path: Path, project_dir: Path) -> Path:
    """``path`` relative to the project when it is inside it (reports name no machine paths)."""
    try:
        return path.resolve().relative_to(project_dir.resolve())
    except ValueError:
        return path
