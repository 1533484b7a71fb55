"""Benchmark evaluation: run episodes, checkpoint units, aggregate, report."""

from freyr_dspy.evaluation._calls import calls_match
from freyr_dspy.evaluation._config import (
    EXTRA_OPTIONS,
    PAPER_SAMPLING,
    EvalConfig,
    parse_benchmark_options,
)
from freyr_dspy.evaluation._harness import EvalRun, evaluate, run_unit
from freyr_dspy.evaluation._provenance import code_version, source_digest
from freyr_dspy.evaluation._report import render_text, report_data, write_json
from freyr_dspy.evaluation._runner import StepRecord, run_episode
from freyr_dspy.evaluation._scoring import (
    EvalSummary,
    planned_steps,
    run_episodes,
    score_program,
    summarise,
)
from freyr_dspy.evaluation._units import UnitKey, UnitResult

__all__ = [
    "EXTRA_OPTIONS",
    "PAPER_SAMPLING",
    "EvalConfig",
    "EvalRun",
    "EvalSummary",
    "StepRecord",
    "UnitKey",
    "UnitResult",
    "calls_match",
    "code_version",
    "evaluate",
    "parse_benchmark_options",
    "planned_steps",
    "render_text",
    "report_data",
    "run_episode",
    "run_episodes",
    "run_unit",
    "score_program",
    "source_digest",
    "summarise",
    "write_json",
]
