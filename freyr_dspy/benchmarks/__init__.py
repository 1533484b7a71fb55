"""Registry of benchmarks: name -> ``Benchmark``. Benchmark modules register themselves."""

from __future__ import annotations

from freyr_dspy._plugins import Registry
from freyr_dspy.benchmarks.base import Benchmark, Episode, EvalOptions, Step, StepScore

#: Benchmark modules register themselves when imported (lazily, by ``get_benchmark``).
BENCHMARKS: Registry[Benchmark] = Registry(
    "benchmark",
    (
        "freyr_dspy.llmaker.benchmark",
        "freyr_dspy.nlt.benchmark",
        "freyr_dspy.callnavi.benchmark",
        "freyr_dspy.benchmarks.todo",
    ),
)
register_benchmark = BENCHMARKS.register
load_all = BENCHMARKS.load_all
get_benchmark = BENCHMARKS.get_named


__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Episode",
    "EvalOptions",
    "Step",
    "StepScore",
    "get_benchmark",
    "load_all",
    "register_benchmark",
]
