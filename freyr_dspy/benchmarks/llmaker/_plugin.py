"""The LLMaker plugin: registers the ``llmaker`` domain and benchmark (``freyr_dspy.registry``)."""

from freyr_dspy.benchmarks.llmaker import _benchmark, _domain

__all__ = ["_benchmark", "_domain"]
