"""The NLT-side strategies on the real embedded default (SmolLM2-135M, in-process): one input each.

SmolLM2-135M rarely writes a usable YES/NO list or JSON call, so these tests check that the
whole path runs and is accounted for (real prompts, real tokens, tolerant parsing, scoring),
not that the tiny model is right.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import FreyrProgram, build_assignment
from freyr_dspy.strategies import Gated, Nlt

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"
SHORT = ("temperature=0", "seed=3", "max_tokens=24")


def assign(program: FreyrProgram) -> FreyrProgram:
    return program.apply_assignment(
        build_assignment(program.role_names, default_model=MODEL, sampling_specs=SHORT)
    )


# NOTE: prompted is slow-marked to keep the default run short; the server test covers it.
@pytest.mark.parametrize("strategy", ["nlt", pytest.param("prompted", marks=pytest.mark.slow)])
def test_strategy_runs_one_alex_input(data_dir: Path, strategy: str) -> None:
    bench = get_benchmark("nlt-alex")
    options = EvalOptions(data_dir=data_dir, limit=1)
    program = assign(bench.make_program(strategy, options))
    [record] = run_episode(bench, program, bench.episodes(options)[0])
    assert record.success in (0.0, 1.0)
    assert record.failure is None or not record.failure.model_failed
    assert record.input_tokens > 200 and record.output_tokens > 0 and record.lm_calls >= 1
    assert set(record.diagnostics["selected"]) <= set(program.domain.make_toolbox().names) | {
        t.extra["topic"] for t in program.toolbox
    }


def test_gated_nlt_on_the_todo_domain() -> None:
    program = assign(
        FreyrProgram("todo", strategy=Gated(inner=Nlt(), respond=False), max_retries=0)
    )
    result = program(message="Add a task called buy milk").result
    assert result.failure is None or not result.failure.model_failed
    assert result.usage["library"].lm_calls == 1 and result.usage["library"].input_tokens > 0
    assert set(result.usage) <= {"library", "tool_selection", "parameters"}
