"""``compile_study``: fit a program to a user's rows by searching the program, with a guard.

One Optuna study (the engine of ``freyr search``) over the program's switches, its demos (how
many, chosen how, on which roles) and, given candidates, its models. Each trial is scored on
every labelled row by cross-validation (``freyr_dspy.search._cross_validation``): the objective
is the mean success, and Optuna's ``WilcoxonPruner`` stops a trial as soon as its rows so far
are significantly worse than the best trial's on the same rows. Tokens and seconds per row
are recorded on every trial, and the report gives the accuracy/tokens Pareto front.

The baseline - what the user already has, the model's preset uncompiled - is the first trial.
The best configuration is shipped only when nested cross-validation says it beats the
baseline (``freyr_dspy.search._selection``); otherwise the baseline is, and the report says
so. The study lives in a file (or an RDB shared by workers on several machines), so an
interrupted compile resumes where it stopped, and its rows' records are cached beside it.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from freyr_dspy.artifacts import ArtifactMeta
from freyr_dspy.backends._replay import ReplayMemo, engines_of, replaying
from freyr_dspy.benchmark import Episode
from freyr_dspy.errors import ConfigError, one_line
from freyr_dspy.evaluation._scoring import EvalSummary, score_program
from freyr_dspy.program import FreyrProgram
from freyr_dspy.search._cross_validation import CrossValidation
from freyr_dspy.search._folds import Folds
from freyr_dspy.search._objective import worker_id
from freyr_dspy.search._program_space import ProgramConfig, ProgramSpace, suggest_program
from freyr_dspy.search._selection import Choice, Scored, choose, wilson_interval
from freyr_dspy.search._space import BaselinePicker, TrialPicker
from freyr_dspy.search._storage import fail_dead_local_trials, open_storage, redact

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial, Trial

__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_TRIALS", "CompileBudget", "CompileOutcome", "compile_study"]

logger = logging.getLogger(__name__)

#: Trials by default: the baseline, two seeded demo configurations and nine of TPE's.
DEFAULT_TRIALS = 12
#: Seconds after which no new trial starts, by default (a running one finishes).
DEFAULT_TIMEOUT = 20 * 60
#: The pruner's significance, and the rows every trial is scored on before it may be pruned.
PRUNE_P = 0.1
PRUNE_AFTER = 12


@dataclass(frozen=True)
class CompileBudget:
    """How much a compile study may spend.

    Args:
        trials: configurations to finish in all (a resumed study runs only what is missing).
        timeout: seconds after which no new trial starts (None: no limit); resumable.
        prune: stop a trial early when its rows so far are significantly worse.
    """

    trials: int = DEFAULT_TRIALS
    timeout: float | None = DEFAULT_TIMEOUT
    prune: bool = True


@dataclass(frozen=True)
class TrialRow:
    """One trial as the report shows it."""

    number: int
    state: str
    config: ProgramConfig
    rows_scored: int
    accuracy: float
    interval: tuple[float, float]
    tokens: float
    seconds: float


@dataclass(frozen=True)
class CompileOutcome:
    """What a compile study chose, why, and the program to ship."""

    program: FreyrProgram
    config: ProgramConfig
    choice: Choice
    trials: tuple[TrialRow, ...]
    pareto: tuple[int, ...]
    n_rows: int
    folds: int
    study_name: str
    storage: str
    seconds: float
    #: The held-out rows' scores of the baseline and of the shipped program, when given.
    test_before: EvalSummary | None = None
    test_after: EvalSummary | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: The artifact metadata to save ``program`` with (``freyr_dspy.save(program, path, meta)``).
    meta: ArtifactMeta | None = None

    @property
    def baseline(self) -> TrialRow:
        """The baseline's trial."""
        return next(t for t in self.trials if t.number == self.choice.baseline)

    @property
    def shipped(self) -> TrialRow:
        """The shipped configuration's trial."""
        return next(t for t in self.trials if t.number == self.choice.shipped)

    def lines(self) -> list[str]:
        """The report: trials, the decision in one line, held-out scores."""
        lines = [
            f"{len(self.trials)} trials on {self.n_rows} rows ({self.folds}-fold "
            f"cross-validation), {self.seconds / 60:.1f} min; study {self.study_name}",
            f"{'trial':>5}  {'state':<8} {'rows':>4}  {'score (95% CI)':<20} {'tokens':>7} "
            f"{'s/row':>6}  configuration",
        ]
        for t in self.trials:
            mark = (
                "*"
                if t.number == self.choice.shipped
                else ("p" if t.number in self.pareto else " ")
            )
            score = f"{t.accuracy:.3f} ({t.interval[0]:.2f}-{t.interval[1]:.2f})"
            lines.append(
                f"{t.number:>4}{mark}  {t.state:<8} {t.rows_scored:>4}  {score:<20} "
                f"{t.tokens:>7.0f} {t.seconds:>6.2f}  {t.config.describe()}"
            )
        lines.append(self.choice.sentence())
        if self.test_before is not None and self.test_after is not None:
            lines.append(
                f"held-out rows: {self.test_before.accuracy:.3f} before (baseline) -> "
                f"{self.test_after.accuracy:.3f} after ({self.test_after.steps} rows)"
            )
        return lines

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (recorded in the artifact, printed with ``--json``)."""
        return {
            "study": self.study_name,
            "storage": self.storage,
            "rows": self.n_rows,
            "folds": self.folds,
            "seconds": round(self.seconds, 1),
            "baseline": self.choice.baseline,
            "candidate": self.choice.candidate,
            "shipped": self.choice.shipped,
            "shipped_config": self.config.model_dump(mode="json"),
            "decision": self.choice.sentence(),
            "guard": {
                "wins": self.choice.wins,
                "losses": self.choice.losses,
                "p_value": round(self.choice.p_value, 4),
                "alpha": self.choice.alpha,
                "nested_accuracy": round(self.choice.nested_accuracy, 4),
            },
            "pareto": list(self.pareto),
            "trials": [
                {
                    "number": t.number,
                    "state": t.state,
                    "rows": t.rows_scored,
                    "accuracy": round(t.accuracy, 4),
                    "interval": [round(v, 4) for v in t.interval],
                    "tokens": round(t.tokens, 1),
                    "seconds": round(t.seconds, 3),
                    "config": t.config.model_dump(mode="json"),
                }
                for t in self.trials
            ],
            **(
                {"test_before": self.test_before.to_json(), "test_after": self.test_after.to_json()}
                if self.test_before is not None and self.test_after is not None
                else {}
            ),
        }


def seed_configs(space: ProgramSpace) -> list[dict[str, Any]]:
    """The trials queued first: the baseline, then its demos by ``nearest`` and ``labeled``.

    Demos from the rows nearest each request were the one compiled change that helped a small
    model on requests of public APIs it had never seen (one-tool requests 60 -> 95 %), and
    labelled demos are the other choice that needs no model call.
    """
    picker = BaselinePicker()
    suggest_program(picker, space)
    base = dict(picker.params)
    seeds = [base]
    if space.max_demos > 0:
        demos = min(3, space.max_demos)
        for optimizer, roles in (("nearest", "plan"), ("labeled", "deciding")):
            if optimizer in space.optimizers and roles in space.demo_roles:
                seed = {**base, "demos": demos}
                if len(space.optimizers) > 1:
                    seed["optimizer"] = optimizer
                if len(space.demo_roles) > 1:
                    seed["demo_roles"] = roles
                seeds.append(seed)
    return seeds


def compile_study(
    cv: CrossValidation,
    space: ProgramSpace,
    *,
    budget: CompileBudget,
    storage: str,
    study_name: str,
    seed: int = 0,
    progress: bool = False,
    test: Sequence[Episode] | None = None,
    on_trial: Callable[[str], None] | None = None,
) -> CompileOutcome:
    """Run (or resume) the study, choose with the guard, and build the program to ship.

    Args:
        cv: scores configurations on the rows (folds, cache, program maker).
        space: what the study varies around the baseline.
        budget: trials, time and pruning.
        storage: the study's storage URL (``journal:PATH``, ``sqlite:///PATH``, an RDB URL).
        study_name: the study's name (the same name resumes it).
        seed: the sampler's seed.
        progress: show Optuna's progress bar (best score so far).
        test: held-out rows scored before (baseline) and after (shipped), never used to choose.
        on_trial: called with one line per finished trial (score, best so far, count).

    Raises:
        ConfigError: when no trial finished on every row, or the storage is unusable.
    """
    started = time.perf_counter()
    study = _open_study(storage, study_name, space, cv.folds, seed)
    for params in seed_configs(space):
        _enqueue(study, params)
    memo = cv.memo or ReplayMemo()
    cv.memo = memo
    baseline_program = cv.make(_config_of(seed_configs(space)[0], space))
    with replaying(engines_of(p.lm for p in baseline_program.predictors()), memo):
        _run(study, cv, space, budget, progress, on_trial)
        trials = _trial_rows(study)
        scored = _scored(study, cv.folds)
        if not scored:
            raise ConfigError(f"compile study {study_name!r} has no trial scored on every row")
        baseline = _baseline_number(study, scored)
        choice = choose(scored, baseline, cv.folds)
        shipped = next(t.config for t in trials if t.number == choice.shipped)
        program = cv.make(shipped)
        if shipped.compiled:
            program = cv.compiled(program, shipped, list(cv.folds.order))
    before = after = None
    if test:
        before = score_program(cv.benchmark, cv.make(trials[0].config), list(test))
        after = score_program(cv.benchmark, program, list(test))
    return CompileOutcome(
        program=program,
        config=shipped,
        choice=choice,
        trials=tuple(trials),
        pareto=_pareto(scored),
        n_rows=len(cv.folds.order),
        folds=cv.folds.k,
        study_name=study_name,
        storage=redact(storage),
        seconds=time.perf_counter() - started,
        test_before=before,
        test_after=after,
        extra={"replayed_calls": memo.hits, "model_calls": memo.misses},
    )


def _run(
    study: Study,
    cv: CrossValidation,
    space: ProgramSpace,
    budget: CompileBudget,
    progress: bool,
    on_trial: Callable[[str], None] | None,
) -> None:
    """Run the queued trials, then more until ``budget.trials`` are finished or time is up."""
    from optuna import TrialPruned

    worker = worker_id()
    remaining = budget.trials - _finished(study)
    if remaining <= 0:
        logger.info("study %s already has %d finished trials", study.study_name, _finished(study))
        return

    def objective(trial: Trial) -> float:
        config = suggest_program(TrialPicker(trial), space)
        trial.set_user_attr("config", config.model_dump(mode="json"))
        trial.set_user_attr("worker", worker)
        rows: dict[str, float] = {}
        tokens = seconds = 0.0
        try:
            for step, row in enumerate(cv.folds.order):
                record = cv.record(config, row)
                rows[row] = record.success
                tokens += record.input_tokens + record.output_tokens
                seconds += record.seconds
                trial.report(record.success, step)
                if budget.prune and step + 1 >= PRUNE_AFTER and trial.should_prune():
                    raise TrialPruned(f"worse than the best trial after {step + 1} rows")
        finally:
            trial.set_user_attr("rows", rows)
            trial.set_user_attr("tokens", tokens / max(len(rows), 1))
            trial.set_user_attr("seconds", seconds / max(len(rows), 1))
            cv.forget(config)
        return sum(rows.values()) / len(rows)

    def stop_at_total(study: Study, trial: FrozenTrial) -> None:
        if on_trial is not None:
            on_trial(_trial_line(study, trial, budget.trials))
        if _finished(study) >= budget.trials:
            study.stop()

    # NOTE: the queued trials (the baseline, and its demos) run whatever the time: a compile
    # always weighs the preset against what demos do; the timeout limits the search after them.
    started = time.perf_counter()
    for trials, timeout in ((min(_queued(study), remaining), None), (remaining, budget.timeout)):
        left = min(trials, budget.trials - _finished(study))
        if left <= 0:
            continue
        if timeout is not None:
            timeout -= time.perf_counter() - started
            if timeout <= 0:
                break
        study.optimize(
            objective,
            n_trials=left,
            timeout=timeout,
            catch=(Exception,),
            callbacks=[stop_at_total],
            show_progress_bar=progress,
        )


def _trial_line(study: Study, trial: FrozenTrial, total: int) -> str:
    """``trial 3 of 12: 0.615 on 91 rows (best 0.637, trial 1)``."""
    rows = trial.user_attrs.get("rows") or {}
    score = sum(rows.values()) / max(len(rows), 1)
    state = "" if trial.state.name == "COMPLETE" else f" ({trial.state.name.lower()})"
    complete = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
    best = max(complete, key=lambda t: t.value or 0.0, default=None)
    shown = f" (best {best.value:.3f}, trial {best.number})" if best is not None else ""
    return (
        f"trial {trial.number} ({_finished(study)} of {total}): {score:.3f} on "
        f"{len(rows)} rows{state}{shown}"
    )


def _open_study(storage: str, name: str, space: ProgramSpace, folds: Folds, seed: int) -> Study:
    """Create or load the study; one built for another space or other rows is refused."""
    import optuna

    backend = open_storage(storage)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=4)
    with warnings.catch_warnings():
        # NOTE: WilcoxonPruner is "experimental" since Optuna 3.6, yet made for this: one score
        # per instance (row), pruned when significantly worse than the best trial's.
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        pruner = optuna.pruners.WilcoxonPruner(p_threshold=PRUNE_P, n_startup_steps=PRUNE_AFTER)
    study = optuna.create_study(
        storage=backend,
        study_name=name,
        sampler=sampler,
        pruner=pruner,
        direction="maximize",
        load_if_exists=True,
    )
    fail_dead_local_trials(backend, name)
    description = {"space": space.describe(), "rows": list(folds.order), "folds": folds.k}
    stored = study.user_attrs.get("freyr_compile")
    if stored is None:
        study.set_user_attr("freyr_compile", description)
    elif stored != description:
        raise ConfigError(
            f"compile study {name!r} in {redact(storage)} was made for other rows or another "
            "search space; pass a new --study name"
        )
    return study


def _enqueue(study: Study, params: Mapping[str, Any]) -> None:
    study.enqueue_trial(dict(params), skip_if_exists=True)


def _queued(study: Study) -> int:
    """Trials queued and not yet taken by a worker (the seeded configurations)."""
    from optuna.trial import TrialState

    return len(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def _finished(study: Study) -> int:
    from optuna.trial import TrialState

    done = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
    return len(study.get_trials(deepcopy=False, states=done))


def _config_of(params: Mapping[str, Any], space: ProgramSpace) -> ProgramConfig:
    picker = _FixedPicker(params)
    return suggest_program(picker, space)


class _FixedPicker(BaselinePicker):
    """A picker that takes the given parameters (the defaults where none is given)."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__()
        self.given = dict(params)

    def categorical(self, name: str, choices: Sequence[Any], default: Any) -> Any:
        """The given value of ``name``, else the default."""
        return super().categorical(name, choices, self.given.get(name, default))

    def int(self, name: str, low: int, high: int, default: int) -> int:
        """The given value of ``name``, else the default."""
        return super().int(name, low, high, int(self.given.get(name, default)))


def _trial_rows(study: Study) -> list[TrialRow]:
    rows = []
    for trial in study.get_trials(deepcopy=False):
        config = trial.user_attrs.get("config")
        if config is None or trial.state.name not in ("COMPLETE", "PRUNED"):
            if trial.state.name == "FAIL":
                logger.warning("trial %d failed: %s", trial.number, _failure_reason(trial))
            continue
        scores = trial.user_attrs.get("rows") or {}
        n = len(scores)
        hits = sum(scores.values())
        rows.append(
            TrialRow(
                number=trial.number,
                state=trial.state.name,
                config=ProgramConfig.model_validate(config),
                rows_scored=n,
                accuracy=hits / max(n, 1),
                interval=wilson_interval(hits, n),
                tokens=float(trial.user_attrs.get("tokens") or 0.0),
                seconds=float(trial.user_attrs.get("seconds") or 0.0),
            )
        )
    return rows


def _failure_reason(trial: FrozenTrial) -> str:
    """What a failed trial recorded as its reason, in one line."""
    reason = trial.system_attrs.get("fail_reason") or trial.user_attrs.get("failure") or "?"
    return one_line(Exception(str(reason)))


def _scored(study: Study, folds: Folds) -> list[Scored]:
    """The trials scored on every row (complete), as the guard reads them."""
    wanted = set(folds.order)
    scored = []
    for trial in study.get_trials(deepcopy=False):
        rows = trial.user_attrs.get("rows") or {}
        if trial.state.name == "COMPLETE" and set(rows) == wanted:
            scored.append(
                Scored(
                    number=trial.number,
                    rows=rows,
                    tokens=float(trial.user_attrs.get("tokens") or 0.0),
                    seconds=float(trial.user_attrs.get("seconds") or 0.0),
                )
            )
    return scored


def _baseline_number(study: Study, scored: Sequence[Scored]) -> int:
    """The first trial (the queued baseline); a study whose baseline failed is refused."""
    first = min(t.number for t in study.get_trials(deepcopy=False))
    if first not in {t.number for t in scored}:
        raise ConfigError(
            f"the baseline (trial {first}) of study {study.study_name!r} did not finish on "
            "every row; its failure is in the log (run with -v)"
        )
    return first


def _pareto(scored: Sequence[Scored]) -> tuple[int, ...]:
    """Trials no other beats on both accuracy (higher) and tokens (lower)."""
    front = []
    for t in scored:
        dominated = any(
            o.accuracy >= t.accuracy
            and o.tokens <= t.tokens
            and (o.accuracy > t.accuracy or o.tokens < t.tokens)
            for o in scored
        )
        if not dominated:
            front.append(t.number)
    return tuple(sorted(front))
