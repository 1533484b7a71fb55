"""The LLMaker plugin: registers the ``llmaker`` domain and benchmark (``freyr_dspy.registry``)."""

from freyr_dspy.benchmarks.llmaker import benchmark, domain

__all__ = ["benchmark", "domain"]
