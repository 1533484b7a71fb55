"""The one evaluation core: run a program over episodes, reduce the step records to numbers.

``freyr compile`` (dev score before and after), ``freyr search`` (a trial's objectives) and
``freyr eval`` (each unit) all run episodes through ``run_episodes``, and compile and search
read their numbers from ``summarise``, so the same records give the same numbers everywhere.
``freyr eval``'s report adds intervals and tests over runs (``aggregate``) on the same
definitions: accuracy over every planned step, cost per step run.
"""

from __future__ import annotations

import contextvars
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from freyr_dspy.benchmark import Benchmark, Episode
from freyr_dspy.evaluation._runner import StepRecord, run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import MODEL_FAILURES

__all__ = [
    "EvalSummary",
    "Progress",
    "planned_steps",
    "run_episodes",
    "score_program",
    "summarise",
]

#: Called with (finished, total) at the start and after every finished episode or unit.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class EvalSummary:
    """What a program scored on a set of episodes, and what it cost per step.

    The field names are the JSON keys of a search trial's ``evaluation`` attribute and of
    the search cache, so studies written before this class existed still read back.
    """

    #: Mean step success over every planned step: a step never reached counts as failed.
    accuracy: float
    #: Mean tokens in + out per step run.
    tokens: float
    #: Mean LM seconds per step run.
    latency: float
    #: Planned steps (the denominator of ``accuracy``).
    steps: int
    #: Steps that ran (fewer when an episode stops at its first failure).
    steps_run: int
    #: Steps on which the model itself failed (transport, provider, context overflow).
    model_failures: int = 0
    #: The first of those failures, as text, to say what went wrong.
    model_failure: str | None = None
    #: Mean of each sub-score the benchmark reports (e.g. ``intents``, ``state``).
    metrics: dict[str, float] = field(default_factory=dict)
    #: How many steps failed, by the benchmark's failure kind.
    failure_kinds: dict[str, int] = field(default_factory=dict)

    def value(self, objective: str) -> float:
        """Return one number by name (``accuracy``, ``tokens`` or ``latency``)."""
        return float(getattr(self, objective))

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalSummary:
        """Rebuild from ``to_json`` output (keys this version does not know are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def run_episodes(
    benchmark: Benchmark,
    program: FreyrProgram,
    episodes: Sequence[Episode],
    *,
    run: int = 0,
    strategy: str | None = None,
    num_threads: int = 1,
    progress: Progress | None = None,
) -> list[StepRecord]:
    """Run every episode on ``program`` and score each step (``runner.run_episode``).

    Args:
        benchmark: scores each step.
        program: the program under test; with ``num_threads > 1`` the threads share it,
            as ``dspy.Evaluate`` shares a program.
        episodes: what to run; each starts from its first step's ``start_state``.
        run: index of the repetition, recorded on every step.
        strategy: the label recorded as the strategy (default: the program's strategy).
        num_threads: episodes run at once; each thread sees the caller's DSPy context.
        progress: called with (finished episodes, total) at the start and after each one.

    Returns:
        The records of every step run, in episode order.

    Raises:
        Exception: whatever running an episode raises (e.g. a strict fake's ``FakeLMError``);
            a model that fails is a record with a ``model`` failure, not an exception.
    """

    def one(episode: Episode) -> list[StepRecord]:
        return run_episode(benchmark, program, episode, run=run, strategy=strategy)

    if progress is not None:
        progress(0, len(episodes))
    if num_threads <= 1 or len(episodes) <= 1:
        done = []
        for episode in episodes:
            done.append(one(episode))
            if progress is not None:
                progress(len(done), len(episodes))
        return [record for records in done for record in records]
    return _run_parallel(one, episodes, num_threads, progress)


def _run_parallel(
    one: Callable[[Episode], list[StepRecord]],
    episodes: Sequence[Episode],
    num_threads: int,
    progress: Progress | None,
) -> list[StepRecord]:
    pool = ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="freyr-episodes")
    try:
        futures = [pool.submit(contextvars.copy_context().run, one, e) for e in episodes]
        pending: set[Future[list[StepRecord]]] = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # re-raises an episode's error here
            if progress is not None:
                progress(len(futures) - len(pending), len(futures))
    finally:
        # NOTE: after an error, episodes already running finish; queued ones are dropped.
        pool.shutdown(wait=True, cancel_futures=True)
    return [record for future in futures for record in future.result()]


def score_program(
    benchmark: Benchmark,
    program: FreyrProgram,
    episodes: Sequence[Episode],
    *,
    num_threads: int = 1,
    progress: Progress | None = None,
) -> EvalSummary:
    """Run ``program`` over ``episodes`` and summarise the records (compile's and search's score).

    Raises:
        Exception: whatever running an episode raises (see ``run_episodes``).
    """
    records = run_episodes(benchmark, program, episodes, num_threads=num_threads, progress=progress)
    return summarise(records, planned_steps(episodes))


def planned_steps(episodes: Sequence[Episode]) -> int:
    """Count the steps of ``episodes``: the denominator of ``EvalSummary.accuracy``."""
    return sum(len(episode.steps) for episode in episodes)


def summarise(records: Sequence[StepRecord], planned: int) -> EvalSummary:
    """Reduce step records to an ``EvalSummary``.

    Args:
        records: the records of every step that ran.
        planned: how many steps the episodes have; steps an episode skipped after a failure
            are not in ``records`` and count as failed.

    Returns:
        Accuracy over the planned steps; tokens, latency and sub-scores averaged over the
        steps that ran (zero when none ran).
    """
    ran = max(len(records), 1)
    failures = [str(r.failure or r.failure_kind) for r in records if _model_failed(r)]
    return EvalSummary(
        accuracy=sum(r.success for r in records) / max(planned, 1),
        tokens=sum(r.input_tokens + r.output_tokens for r in records) / ran,
        latency=sum(r.seconds for r in records) / ran,
        steps=planned,
        steps_run=len(records),
        model_failures=len(failures),
        model_failure=failures[0] if failures else None,
        metrics=_mean_metrics(records),
        failure_kinds=dict(Counter(r.failure_kind for r in records if r.failure_kind)),
    )


def _mean_metrics(records: Sequence[StepRecord]) -> dict[str, float]:
    """Mean of each sub-score over the steps run; a step that lacks one counts 0."""
    names = sorted({name for r in records for name in r.metrics})
    return {n: round(sum(r.metrics.get(n, 0.0) for r in records) / len(records), 4) for n in names}


def _model_failed(record: StepRecord) -> bool:
    failure = record.failure
    return record.failure_kind in MODEL_FAILURES or (failure is not None and failure.model_failed)
