"""Few-shot demos for trials that search ``num_demos``: gold-labelled, never from evaluated steps.

A trial with ``num_demos = k`` gets up to k demos per role from the project's trainset,
replayed from its gold calls (the compiler's ``labeled`` optimizer: no LM calls, so adding
demos costs a trial nothing but prompt tokens). Steps the search evaluates on are excluded
from the demo pool, otherwise a configuration would be scored on its own demos.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.search._objective import DemoFn
from freyr_dspy.search._space import TrialConfig
from freyr_dspy.settings import Settings

__all__ = ["hold_out", "labeled_demo_fn", "step_ids"]


def labeled_demo_fn(
    benchmark: Benchmark,
    settings: Settings,
    options: EvalOptions,
    *,
    exclude: Collection[str],
    seed: int = 0,
) -> DemoFn:
    """Return a ``DemoFn`` adding gold demos from trainset steps not in ``exclude``."""
    pool: list[Any] = []

    def add_demos(program: FreyrProgram, k: int, config: TrialConfig) -> FreyrProgram:
        from freyr_dspy.compiling import (
            BenchmarkMetric,
            OptimizerConfig,
            load_trainset,
            optimize,
            reattach_models,
        )

        if not pool:
            examples = load_trainset(benchmark, settings, options)
            pool.extend(e for e in examples if e.step.id not in exclude)
        if not pool:
            raise ConfigError(
                f"no trainset rows of {benchmark.name!r} are left for demos: the search "
                "evaluates on all of them; search num_demos with --split test or more rows"
            )
        metric = BenchmarkMetric(benchmark, program.coerce_state)
        compiled = optimize(
            OptimizerConfig(name="labeled", max_demos=k, seed=seed), program, pool, metric
        )
        reattach_models(program, compiled)
        return compiled

    return add_demos


def hold_out(episodes: Sequence[Episode], *, seed: int, fraction: float = 0.5) -> list[Episode]:
    """Keep a seeded ``1 - fraction`` of the episodes for evaluation (the rest feed demos)."""
    shuffled = list(episodes)
    random.Random(seed).shuffle(shuffled)
    cut = min(max(1, round(len(shuffled) * fraction)), len(shuffled) - 1)
    return sorted(shuffled[cut:], key=lambda e: e.id) if len(shuffled) > 1 else shuffled


def step_ids(episodes: Sequence[Episode]) -> set[str]:
    """The ids of every step of ``episodes``."""
    return {step.id for episode in episodes for step in episode.steps}
