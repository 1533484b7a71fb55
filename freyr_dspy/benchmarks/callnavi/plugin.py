"""The CallNavi plugin: registers its domain, roles, strategies, gold answers and benchmark."""

from freyr_dspy.benchmarks.callnavi import benchmark, domain, oracle, roles, strategies

__all__ = ["benchmark", "domain", "oracle", "roles", "strategies"]
