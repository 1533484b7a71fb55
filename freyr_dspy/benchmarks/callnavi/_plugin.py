"""The CallNavi plugin: registers its domain, roles, strategies, gold answers and benchmark."""

from freyr_dspy.benchmarks.callnavi import _benchmark, _domain, _oracle, _roles, _strategies

__all__ = ["_benchmark", "_domain", "_oracle", "_roles", "_strategies"]
