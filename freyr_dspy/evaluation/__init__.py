"""Benchmark evaluation: run episodes, checkpoint units, aggregate, report."""

from freyr_dspy.evaluation._calls import calls_match, values_equal
from freyr_dspy.evaluation._comparison import compare_reports, render_comparison
from freyr_dspy.evaluation._config import (
    EXTRA_OPTIONS,
    PAPER_SAMPLING,
    EvalConfig,
    parse_benchmark_options,
)
from freyr_dspy.evaluation._export import summarise_report
from freyr_dspy.evaluation._harness import EvalRun, evaluate, run_unit
from freyr_dspy.evaluation._provenance import code_version, source_digest
from freyr_dspy.evaluation._report import read_report, render_text, report_data, write_json
from freyr_dspy.evaluation._retries import format_retry_table, retry_stats
from freyr_dspy.evaluation._runner import StepRecord, run_episode
from freyr_dspy.evaluation._scoring import (
    EvalSummary,
    Progress,
    planned_steps,
    run_episodes,
    score_program,
    summarise,
)
from freyr_dspy.evaluation._stats import levenshtein, variance_across_inputs, variance_across_runs
from freyr_dspy.evaluation._units import UnitKey, UnitResult

__all__ = [
    "EXTRA_OPTIONS",
    "PAPER_SAMPLING",
    "EvalConfig",
    "EvalRun",
    "EvalSummary",
    "Progress",
    "StepRecord",
    "UnitKey",
    "UnitResult",
    "calls_match",
    "code_version",
    "compare_reports",
    "evaluate",
    "format_retry_table",
    "levenshtein",
    "parse_benchmark_options",
    "planned_steps",
    "read_report",
    "render_comparison",
    "render_text",
    "report_data",
    "retry_stats",
    "run_episode",
    "run_episodes",
    "run_unit",
    "score_program",
    "source_digest",
    "summarise",
    "summarise_report",
    "values_equal",
    "variance_across_inputs",
    "variance_across_runs",
    "write_json",
]
