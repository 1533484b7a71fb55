"""The NLT plugin: registers the ``nlt-alex``/``nlt-sage`` domains and benchmarks."""

from freyr_dspy.benchmarks.nlt import _benchmark, _domain

__all__ = ["_benchmark", "_domain"]
