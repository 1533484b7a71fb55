"""The objective of a model-assignment study: build a fresh program, run it, score it.

Every trial builds its program from scratch (no state leaks between trials), runs the
benchmark's episodes and reduces the step records with ``evaluation.score_program`` (the
numbers ``freyr compile`` and ``freyr eval`` report too) to ``accuracy`` (mean step success,
maximised), ``tokens`` (mean tokens in + out per step run, minimised) and ``latency`` (mean LM
seconds per step run, minimised). Only JSON reaches ``trial.set_user_attr``: the configuration,
the evaluation and, for a failed trial, its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions
from freyr_dspy.errors import BackendError, one_line
from freyr_dspy.evaluation import EvalSummary, score_program
from freyr_dspy.program import FreyrProgram, ProgramSpec
from freyr_dspy.search._space import SearchSpace, TrialConfig, TrialPicker, suggest
from freyr_dspy.studies import EvaluationCache, worker_id

if TYPE_CHECKING:
    from optuna.trial import Trial

__all__ = ["LOST_REASONS", "OBJECTIVES", "DemoFn", "Objective", "build_trial_program", "worker_id"]

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


def build_trial_program(
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

    spec = ProgramSpec(
        strategy=config.strategy, max_retries=config.max_retries, assignment=config.assignment
    )
    program = FreyrProgram.from_spec(spec, benchmark=benchmark, eval_options=options)
    if config.num_demos:
        if demo_fn is None:
            raise ConfigError("num_demos > 0 needs a demo provider (demo_fn); none was given")
        program = demo_fn(program, config.num_demos, config)
    return program


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
        evaluation = EvalSummary.from_json(cached) if cached else self._evaluate(trial, config)
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
        from freyr_dspy.artifacts import freyr_version

        return EvaluationCache.key(
            config=config.model_dump(mode="json"),
            benchmark=self.benchmark.name,
            episodes=[e.id for e in self.episodes],
            options=self.options.extra,
            mode=self.options.mode,
            version=freyr_version(),
        )

    def _evaluate(self, trial: Trial, config: TrialConfig) -> EvalSummary:
        try:
            program = build_trial_program(self.benchmark, config, self.options, self.demo_fn)
            evaluation = score_program(self.benchmark, program, self.episodes)
        except KeyboardInterrupt:
            trial.set_user_attr("failure", LOST_REASONS[0])
            raise
        except Exception as exc:
            trial.set_user_attr("failure", one_line(exc, typed=True))
            logger.warning("trial %d failed: %s", trial.number, one_line(exc))
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
