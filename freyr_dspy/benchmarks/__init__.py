"""Registry of benchmarks: name -> ``Benchmark``. Benchmark modules register themselves."""

from __future__ import annotations

from freyr_dspy._plugins import import_optional
from freyr_dspy.benchmarks.base import Benchmark, Episode, EvalOptions, Step, StepScore
from freyr_dspy.errors import UnknownNameError

BENCHMARKS: dict[str, Benchmark] = {}

#: Modules that register benchmarks when imported (imported lazily by ``get_benchmark``).
BENCHMARK_MODULES: tuple[str, ...] = (
    "freyr_dspy.llmaker.benchmark",
    "freyr_dspy.nlt.benchmark",
    "freyr_dspy.callnavi.benchmark",
    "freyr_dspy.benchmarks.todo",
)


def register_benchmark(benchmark: Benchmark) -> None:
    """Add (or replace) a benchmark."""
    BENCHMARKS[benchmark.name] = benchmark


def load_all() -> dict[str, Benchmark]:
    """Import every benchmark module and return the registry."""
    import_optional(BENCHMARK_MODULES)
    return BENCHMARKS


def get_benchmark(name: str) -> Benchmark:
    """Return the benchmark called ``name``.

    Raises:
        UnknownNameError: with the known names and a "did you mean".
    """
    if name not in BENCHMARKS:
        load_all()
    if name not in BENCHMARKS:
        raise UnknownNameError("benchmark", name, BENCHMARKS)
    return BENCHMARKS[name]


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
