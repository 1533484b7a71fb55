"""Model-assignment search: which model plays which role, with which sampling settings.

An Optuna study over the model per role, temperature / top-p / top-k, strategy, retries and
demos, scored by a benchmark on accuracy, tokens and latency; the Pareto front is the answer.
"""

from freyr_dspy.search._best import compile_best
from freyr_dspy.search._objective import OBJECTIVES, Objective, build_trial_program
from freyr_dspy.search._report import format_table, write_report
from freyr_dspy.search._result import SearchResult, TrialSummary
from freyr_dspy.search._space import (
    ALL_ROLES,
    SearchSpace,
    TrialConfig,
    baseline,
    parse_bounds,
    parse_candidates,
    parse_numbers,
    space_digest,
    suggest,
)
from freyr_dspy.search._study import enqueue, load_episodes, search_assignments
from freyr_dspy.studies import EvaluationCache, open_storage, storage_url

__all__ = [
    "ALL_ROLES",
    "OBJECTIVES",
    "EvaluationCache",
    "Objective",
    "SearchResult",
    "SearchSpace",
    "TrialConfig",
    "TrialSummary",
    "baseline",
    "build_trial_program",
    "compile_best",
    "enqueue",
    "format_table",
    "load_episodes",
    "open_storage",
    "parse_bounds",
    "parse_candidates",
    "parse_numbers",
    "search_assignments",
    "space_digest",
    "storage_url",
    "suggest",
    "write_report",
]
