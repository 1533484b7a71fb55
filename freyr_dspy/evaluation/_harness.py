"""``evaluate``: run benchmarks x contestants x runs x episodes, resumably and in parallel.

Each unit (one episode of one benchmark, contestant and run) gets a fresh program and fresh
LM calls (DSPy's cache stays off, so every run pays for and measures its own calls). Finished
units go to the checkpoint at once; on an error or Ctrl-C the evaluation stops, and running
it again skips what is already there.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation._checkpoint import Checkpoint
from freyr_dspy.evaluation._config import EvalConfig
from freyr_dspy.evaluation._plan import Plan, Unit, build_unit_program, make_plan
from freyr_dspy.evaluation._runner import StepRecord
from freyr_dspy.evaluation._scoring import Progress, run_episodes
from freyr_dspy.evaluation._units import UnitKey, UnitResult

__all__ = ["EvalRun", "evaluate", "run_unit"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalRun:
    """What ``evaluate`` produced: the plan, every unit's result and how many were resumed.

    A run of ``freyr eval`` can be resumed and holds every record; ``scoring.EvalSummary``
    is the numbers of one program on some episodes.
    """

    config: EvalConfig
    plan: Plan
    units: tuple[UnitResult, ...]
    resumed: int = 0

    @property
    def records(self) -> list[StepRecord]:
        """Every step record, in plan order."""
        return [record for unit in self.units for record in unit.records]

    def describe(self) -> dict[str, Any]:
        """The configuration plus what the plan resolved it to (JSON-ready)."""
        return {
            **self.config.describe(),
            "fingerprint": self.config.fingerprint(),
            "contestants": {b: [c.label for c in cs] for b, cs in self.plan.contestants.items()},
            "units": len(self.units),
            "planned_units": len(self.plan.units),
            "resumed_units": self.resumed,
        }


def evaluate(
    config: EvalConfig,
    *,
    checkpoint: Path | None = None,
    restart: bool = False,
    progress: Progress | None = None,
    report_only: bool = False,
) -> EvalRun:
    """Run an evaluation, resuming from ``checkpoint`` when it holds finished units.

    Args:
        config: what to evaluate.
        checkpoint: JSONL file of finished units (None: no resume).
        restart: discard the checkpoint's units instead of resuming.
        progress: called with (finished, total) at the start and after every unit.
        report_only: run nothing; report the units the checkpoint already holds (safe while
            another process is still writing it).

    Returns:
        Every unit's records, in plan order (only the finished ones with ``report_only``).

    Raises:
        ConfigError: for unknown names, bad specs, or a checkpoint of another configuration.
        FreyrError: whatever a unit raises (e.g. a strict fake's ``FakeLMError``); the units
            finished before it stay in the checkpoint.
    """
    plan = make_plan(config)
    if config.jobs > 1 and "embedded/" in f"{config.default_model} {config.model_specs}":
        logger.warning(
            "embedded models run one call at a time: --jobs %d adds waiting time "
            "to the seconds measured per step",
            config.jobs,
        )
    if report_only:
        return _finished_so_far(plan, config, checkpoint)
    store = _open(checkpoint, config, restart)
    try:
        planned = {unit.key for unit in plan.units}
        finished = {k: v for k, v in store.finished.items() if k in planned}
        todo = [unit for unit in plan.units if unit.key not in finished]
        resumed = len(finished)
        if resumed:
            logger.info("resuming: %d of %d units already finished", resumed, len(plan.units))
        _report(progress, len(finished), len(plan.units))
        for result in _execute(todo, config, store):
            finished[result.key] = result
            _report(progress, len(finished), len(plan.units))
    finally:
        store.close()
    units = tuple(finished[unit.key] for unit in plan.units)
    return EvalRun(config=config, plan=plan, units=units, resumed=resumed)


def _finished_so_far(plan: Plan, config: EvalConfig, path: Path | None) -> EvalRun:
    if path is None:
        raise ConfigError("a report of finished units needs the checkpoint's --out file")
    stored = Checkpoint(path, config.fingerprint(), config.result_settings(), read_only=True)
    units = tuple(stored.finished[u.key] for u in plan.units if u.key in stored.finished)
    return EvalRun(config=config, plan=plan, units=units, resumed=len(units))


def run_unit(unit: Unit, config: EvalConfig) -> UnitResult:
    """Run one unit on a fresh program; records are normalised as a checkpoint stores them."""
    program = build_unit_program(unit.benchmark, unit.contestant, config, run=unit.key.run)
    records = run_episodes(
        unit.benchmark, program, [unit.episode], run=unit.key.run, strategy=unit.contestant.label
    )
    # NOTE: through JSON and back, so a resumed evaluation equals an uninterrupted one.
    normalised = tuple(StepRecord.from_json(r.to_json()) for r in records)
    steps = tuple(step.id for step in unit.episode.steps)
    return UnitResult(unit.key, unit.episode.case, len(steps), normalised, steps)


def _execute(todo: Sequence[Unit], config: EvalConfig, store: _Store) -> Iterator[UnitResult]:
    if config.jobs <= 1:
        for unit in todo:
            result = run_unit(unit, config)
            store.append(result)
            yield result
        return
    yield from _execute_parallel(todo, config, store)


def _execute_parallel(
    todo: Sequence[Unit], config: EvalConfig, store: _Store
) -> Iterator[UnitResult]:
    """Run units on threads; each thread sees the caller's DSPy context (a copy of it)."""

    def work(unit: Unit) -> UnitResult:
        result = run_unit(unit, config)
        store.append(result)  # from the worker: saved even if the caller is interrupted
        return result

    pool = ThreadPoolExecutor(max_workers=config.jobs, thread_name_prefix="freyr-eval")
    try:
        pending: set[Future[UnitResult]] = {
            pool.submit(contextvars.copy_context().run, work, unit) for unit in todo
        }
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                yield future.result()  # re-raises a unit's error here
    finally:
        # NOTE: units already running finish (and are saved); queued ones are dropped.
        pool.shutdown(wait=True, cancel_futures=True)


class _Store:
    """The checkpoint, or nothing when the evaluation is not resumable."""

    def __init__(self, checkpoint: Checkpoint | None) -> None:
        self.checkpoint = checkpoint
        self.finished: dict[UnitKey, UnitResult] = checkpoint.finished if checkpoint else {}

    def append(self, unit: UnitResult) -> None:
        if self.checkpoint is not None:
            self.checkpoint.append(unit)

    def close(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.close()


def _open(path: Path | None, config: EvalConfig, restart: bool) -> _Store:
    if path is None:
        return _Store(None)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _Store(Checkpoint(path, config.fingerprint(), config.result_settings(), restart=restart))


def _report(progress: Progress | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)
