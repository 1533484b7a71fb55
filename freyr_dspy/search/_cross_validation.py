"""Score a configuration on every row, each by the program compiled without that row's fold.

``CrossValidation.record(config, row)`` is one row's step record: a configuration without demos
is the same program for every row; one with demos is compiled per fold (``fold_program``: its
demos chosen from the other folds' rows by the configuration's optimizer), so no row is ever
scored by a program that saw it. Records are kept in a file cache under the study's folder,
keyed by everything that decides them (configuration, fold, row, data, freyr version), so a
resumed or repeated study - or another worker on the same folder - pays for a row once.

While the rows run, the program's in-process models replay calls already made
(``freyr_dspy.backends._replay``); a replayed call costs no time, so the seconds it took when it
was first made are added back to the row's record: what a configuration would cost is what
the study reports.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import dspy

from freyr_dspy.backends._replay import ReplayMemo
from freyr_dspy.benchmark import Benchmark, Episode
from freyr_dspy.compiling._compiler import reattach_models
from freyr_dspy.compiling._dataset_demos import deciding_roles
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.compiling._optimizers import OptimizerConfig, optimize
from freyr_dspy.evaluation._runner import StepRecord, run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.search._cache import EvaluationCache
from freyr_dspy.search._folds import Folds
from freyr_dspy.search._program_space import DemoRoles, ProgramConfig

__all__ = ["CrossValidation", "ProgramMaker"]

logger = logging.getLogger(__name__)

#: Builds a configuration's uncompiled program, with its models.
ProgramMaker = Callable[[ProgramConfig], FreyrProgram]

#: The roles that make the plan: ``demo_roles="plan"`` keeps demos on these only.
PLAN_ROLES = ("intent", "asks", "confirm", "library", "tool_selection")


def demo_roles_of(program: FreyrProgram, roles: DemoRoles) -> tuple[str, ...]:
    """The roles of ``program`` that keep demos under ``roles``."""
    deciding = deciding_roles(program)
    return tuple(r for r in deciding if r in PLAN_ROLES) if roles == "plan" else deciding


@dataclass
class CrossValidation:
    """Rows scored by fold programs (see the module docstring).

    Args:
        benchmark: scores each row.
        episodes: the rows, single-step episodes by id.
        examples: each row's training example (inputs and gold step), by id.
        folds: which fold each row is in.
        make: builds a configuration's uncompiled program.
        optimizer: the demo optimizers' fixed knobs (seed, teacher, fields left out, cut).
        cache: stored records; ``context`` names what else decides them.
        memo: the replay memo attached to the program's models, if any.
    """

    benchmark: Benchmark
    episodes: Mapping[str, Episode]
    examples: Mapping[str, dspy.Example]
    folds: Folds
    make: ProgramMaker
    optimizer: OptimizerConfig
    cache: EvaluationCache
    context: Mapping[str, object] = field(default_factory=dict)
    memo: ReplayMemo | None = None
    _programs: dict[tuple[str, int | None], FreyrProgram] = field(default_factory=dict)

    def record(self, config: ProgramConfig, row: str) -> StepRecord:
        """The row's record under ``config`` (from the cache when it was scored before)."""
        fold = self.folds.fold_of[row] if config.compiled else None
        key = self._key(config, fold, row)
        stored = self.cache.get(key)
        if stored is not None:
            return StepRecord.from_json(stored)
        record = self._run(self.fold_program(config, fold), row)
        self.cache.put(key, record.to_json(), config=config.canonical(), row=row, fold=fold)
        return record

    def fold_program(self, config: ProgramConfig, fold: int | None) -> FreyrProgram:
        """The program that scores ``fold``'s rows: demos from the other folds (None: none)."""
        key = (config.canonical(), fold)
        if key not in self._programs:
            program = self.make(config)
            if fold is not None:
                program = self.compiled(program, config, self.folds.train_ids(fold))
            self._programs[key] = program
        return self._programs[key]

    def compiled(
        self, program: FreyrProgram, config: ProgramConfig, rows: Sequence[str]
    ) -> FreyrProgram:
        """``program`` with ``config``'s demos, chosen from ``rows`` by its optimizer."""
        assert config.optimizer is not None  # the caller checked config.compiled
        settings = self.optimizer.model_copy(
            update={
                "name": config.optimizer,
                "max_demos": config.demos,
                "demo_roles": demo_roles_of(program, config.demo_roles),
            }
        )
        trainset = [self.examples[row] for row in rows]
        metric = BenchmarkMetric(self.benchmark, program.coerce_state)
        compiled = optimize(settings, program, trainset, metric)
        reattach_models(program, compiled)
        return compiled

    def forget(self, config: ProgramConfig) -> None:
        """Drop ``config``'s fold programs (a finished trial's programs are not needed again)."""
        for key in [k for k in self._programs if k[0] == config.canonical()]:
            del self._programs[key]

    def _run(self, program: FreyrProgram, row: str) -> StepRecord:
        replayed = self.memo.replayed_seconds if self.memo is not None else 0.0
        (record,) = run_episode(self.benchmark, program, self.episodes[row])
        if self.memo is not None:
            saved = self.memo.replayed_seconds - replayed
            record = _with_seconds(record, record.seconds + saved)
        return record

    def _key(self, config: ProgramConfig, fold: int | None, row: str) -> str:
        return EvaluationCache.key(
            config=config.canonical(),
            fold=None if fold is None else self.folds.signature(fold),
            row=row,
            **self.context,
        )


def _with_seconds(record: StepRecord, seconds: float) -> StepRecord:
    from dataclasses import replace

    return replace(record, seconds=round(seconds, 4))
