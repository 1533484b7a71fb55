"""Benchmark evaluation: run episodes, record steps, aggregate, report."""

from freyr_dspy.evaluation.runner import StepRecord, run_episode

__all__ = ["StepRecord", "run_episode"]
