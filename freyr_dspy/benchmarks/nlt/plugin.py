"""The NLT plugin: registers the ``nlt-alex``/``nlt-sage`` domains and benchmarks."""

from freyr_dspy.benchmarks.nlt import benchmark, domain

__all__ = ["benchmark", "domain"]
