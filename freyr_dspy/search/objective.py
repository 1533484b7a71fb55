"""The objective of a model-assignment study: build a fresh program, run it, score it.

Every trial builds its program from scratch (no state leaks between trials), runs the
benchmark's episodes through ``evaluation.run_episode`` and reduces the step records to
``accuracy`` (mean step success, maximised), ``tokens`` (mean tokens in + out per step run,
minimised) and ``latency`` (mean LM seconds per step run, minimised). Only JSON reaches
``trial.set_user_attr``: the configuration, the evaluation and, for a failed trial, its reason.
"""

from __future__ import annotations

import logging
import os
import socket
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from freyr_dspy.errors import BackendError
from freyr_dspy.evaluation.benchmark import Benchmark, Episode, EvalOptions
from freyr_dspy.evaluation.runner import StepRecord, run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import MODEL_FAILURES
from freyr_dspy.search.cache import EvaluationCache
from freyr_dspy.search.space import SearchSpace, TrialConfig, TrialPicker, suggest

if TYPE_CHECKING:
    from optuna.trial import Trial

__all__ = [
    "LOST_REASONS",
    "OBJECTIVES",
    "DemoFn",
    "Direction",
    "Evaluation",
    "Objective",
    "build_program",
    "evaluate",
    "summarise",
    "worker_id",
]

logger = logging.getLogger(__name__)

#: Objective name -> Optuna direction.
Direction = Literal["maximize", "minimize"]
OBJECTIVES: dict[str, Direction] = {
    "accuracy": "maximize",
    "tokens": "minimize",
    "latency": "minimize",
}

#: Reasons of trials that did not finish because the worker stopped (they are run again).
LOST_REASONS = ("interrupted", "worker died")

#: ``demo_fn(program, num_demos, config)`` adds few-shot demos to a fresh program.
DemoFn = Callable[[FreyrProgram, int, TrialConfig], FreyrProgram]


@dataclass(frozen=True)
class Evaluation:
    """What one configuration scored on the episodes."""

    accuracy: float
    tokens: float
    latency: float
    steps: int
    steps_run: int
    model_failures: int = 0
    model_failure: str | None = None
    #: Mean of each sub-score the benchmark reports (e.g. ``intents``, ``state``).
    metrics: dict[str, float] = field(default_factory=dict)
    #: How many steps failed, by the benchmark's failure kind.
    failure_kinds: dict[str, int] = field(default_factory=dict)

    def value(self, objective: str) -> float:
        """The value of one objective (``accuracy``, ``tokens`` or ``latency``)."""
        return float(getattr(self, objective))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        """Rebuild from ``to_json`` output (keys this version does not know are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def summarise(records: Sequence[StepRecord], total_steps: int) -> Evaluation:
    """Reduce step records to an ``Evaluation``.

    Accuracy divides by every step of the episodes, so steps an episode skipped after a
    failure count as failed; cost is averaged over the steps that ran.
    """
    ran = max(len(records), 1)
    failures = [str(r.failure or r.failure_kind) for r in records if _model_failed(r)]
    return Evaluation(
        accuracy=sum(r.success for r in records) / max(total_steps, 1),
        tokens=sum(r.input_tokens + r.output_tokens for r in records) / ran,
        latency=sum(r.seconds for r in records) / ran,
        steps=total_steps,
        steps_run=len(records),
        model_failures=len(failures),
        model_failure=failures[0] if failures else None,
        metrics=_mean_metrics(records),
        failure_kinds=dict(Counter(r.failure_kind for r in records if r.failure_kind)),
    )


def _mean_metrics(records: Sequence[StepRecord]) -> dict[str, float]:
    names = sorted({name for r in records for name in r.metrics})
    return {n: round(sum(r.metrics.get(n, 0.0) for r in records) / len(records), 4) for n in names}


def build_program(
    benchmark: Benchmark,
    config: TrialConfig,
    options: EvalOptions,
    demo_fn: DemoFn | None = None,
) -> FreyrProgram:
    """Build a fresh program for one configuration (models, retries, demos).

    Raises:
        ConfigError: when demos are asked for but no demo provider is given.
    """
    from freyr_dspy.errors import ConfigError

    program = benchmark.make_program(config.strategy, options)
    program.max_retries = config.max_retries
    program.apply_assignment(config.assignment)
    if config.num_demos:
        if demo_fn is None:
            raise ConfigError("num_demos > 0 needs a demo provider (demo_fn); none was given")
        program = demo_fn(program, config.num_demos, config)
    return program


def evaluate(
    benchmark: Benchmark,
    config: TrialConfig,
    episodes: Sequence[Episode],
    options: EvalOptions,
    demo_fn: DemoFn | None = None,
) -> Evaluation:
    """Run every episode on a fresh program for ``config`` and summarise the records."""
    program = build_program(benchmark, config, options, demo_fn)
    records = [r for episode in episodes for r in run_episode(benchmark, program, episode)]
    return summarise(records, sum(len(e.steps) for e in episodes))


class Objective:
    """The callable handed to ``study.optimize``; one instance serves every trial of a run.

    Args:
        benchmark: scores the steps.
        space: what the trials may vary.
        episodes: the episodes every configuration is evaluated on.
        options: passed to ``benchmark.make_program``.
        objectives: names from ``OBJECTIVES``, in the study's order.
        cache: evaluations already paid for.
        demo_fn: adds demos when a configuration asks for them.
        max_model_failure_rate: fail the trial when the model failed (transport/provider
            error) on more than this fraction of the steps run: its scores would measure the
            outage, not the configuration.
    """

    def __init__(
        self,
        benchmark: Benchmark,
        space: SearchSpace,
        episodes: Sequence[Episode],
        *,
        options: EvalOptions,
        objectives: Sequence[str],
        cache: EvaluationCache,
        demo_fn: DemoFn | None = None,
        max_model_failure_rate: float = 0.5,
    ) -> None:
        self.benchmark = benchmark
        self.space = space
        self.episodes = list(episodes)
        self.options = options
        self.objectives = tuple(objectives)
        self.cache = cache
        self.demo_fn = demo_fn
        self.max_model_failure_rate = max_model_failure_rate
        self.worker = worker_id()

    def __call__(self, trial: Trial) -> tuple[float, ...]:
        """Evaluate the trial's configuration (from the cache when it was seen before)."""
        config = suggest(TrialPicker(trial), self.space)
        trial.set_user_attr("config", config.model_dump(mode="json"))
        trial.set_user_attr("worker", self.worker)
        key = self.cache_key(config)
        cached = self.cache.get(key)
        evaluation = Evaluation.from_json(cached) if cached else self._evaluate(trial, config)
        if cached is None:
            self.cache.put(
                key,
                evaluation.to_json(),
                benchmark=self.benchmark.name,
                config=config.model_dump(mode="json"),
            )
        trial.set_user_attr("cached", cached is not None)
        trial.set_user_attr("evaluation", evaluation.to_json())
        logger.info(
            "trial %d %s: %s",
            trial.number,
            config.models_text(),
            ", ".join(f"{o}={evaluation.value(o):.4g}" for o in self.objectives),
        )
        return tuple(evaluation.value(o) for o in self.objectives)

    def cache_key(self, config: TrialConfig) -> str:
        """The cache key: configuration, benchmark, episodes and freyr version."""
        from freyr_dspy import __version__

        return EvaluationCache.key(
            config=config.model_dump(mode="json"),
            benchmark=self.benchmark.name,
            episodes=[e.id for e in self.episodes],
            options=self.options.extra,
            mode=self.options.mode,
            version=__version__,
        )

    def _evaluate(self, trial: Trial, config: TrialConfig) -> Evaluation:
        try:
            evaluation = evaluate(self.benchmark, config, self.episodes, self.options, self.demo_fn)
        except KeyboardInterrupt:
            trial.set_user_attr("failure", LOST_REASONS[0])
            raise
        except Exception as exc:
            trial.set_user_attr("failure", f"{type(exc).__name__}: {_one_line(exc)}")
            logger.warning("trial %d failed: %s", trial.number, _one_line(exc))
            raise
        rate = evaluation.model_failures / max(evaluation.steps_run, 1)
        if evaluation.model_failures and rate > self.max_model_failure_rate:
            reason = (
                f"model failed on {evaluation.model_failures}/{evaluation.steps_run} "
                f"steps: {evaluation.model_failure}"
            )
            trial.set_user_attr("failure", reason)
            trial.set_user_attr("evaluation", evaluation.to_json())
            raise BackendError(reason)
        return evaluation


def worker_id() -> str:
    """``host:pid`` of this process, recorded on every trial it runs."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _model_failed(record: StepRecord) -> bool:
    failure = record.failure
    return record.failure_kind in MODEL_FAILURES or (failure is not None and failure.model_failed)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
