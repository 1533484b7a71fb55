"""The tiny benchmark of the evaluation tests (``tests/support/tiny_benchmark.py``) scores as
designed: ``freyr`` and ``lazy`` differ in a known way."""

from __future__ import annotations

from pathlib import Path

import pytest

from freyr_dspy.benchmarks import EvalOptions
from freyr_dspy.errors import FakeLMError
from freyr_dspy.evaluation import StepRecord, run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.testing import unregister_fake
from tests.support.tiny_benchmark import CountingRules, TinyBenchmark, install, install_fake


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> TinyBenchmark:
    return install(monkeypatch)


def _program(strategy: str) -> FreyrProgram:
    from freyr_dspy.program import build_assignment

    program = FreyrProgram("todo", strategy=strategy, max_retries=1)
    return program.apply_assignment(
        build_assignment(program.role_names, default_model="fake/rules")
    )


def test_tiny_benchmark_scores_freyr_and_lazy_differently(tiny: TinyBenchmark) -> None:
    options = EvalOptions(data_dir=Path())
    episode = tiny.episodes(options)[0]
    freyr = run_episode(tiny, _program("freyr"), episode, run=2)
    lazy = run_episode(tiny, _program("lazy"), episode, strategy="label")
    assert [r.success for r in freyr] == [1.0]
    assert freyr[0].run == 2 and freyr[0].strategy == "freyr" and freyr[0].case == "add"
    assert freyr[0].calls[0]["tool"] == "add_task" and freyr[0].input_tokens > 0
    assert [r.success for r in lazy] == [0.0]
    assert lazy[0].strategy == "label" and lazy[0].failure_kind == "domain"


def test_iterative_episode_carries_state_and_stops_on_failure(tiny: TinyBenchmark) -> None:
    options = EvalOptions(data_dir=Path(), mode="iterative")
    episode = tiny.episodes(options)[0]
    assert [r.success for r in run_episode(tiny, _program("freyr"), episode)] == [1.0, 1.0]
    assert [r.success for r in run_episode(tiny, _program("lazy"), episode)] == [0.0]


def test_step_record_json_round_trip(tiny: TinyBenchmark) -> None:
    episode = tiny.episodes(EvalOptions(data_dir=Path()))[2]
    record = run_episode(tiny, _program("freyr"), episode)[0]
    again = StepRecord.from_json({**record.to_json(), "unknown_key": 1})
    assert again == record


def test_counting_fake_fails_after_n_calls() -> None:
    counter = CountingRules(fail_after=0)
    install_fake("tiny-count", counter)
    try:
        program = FreyrProgram("todo", strategy="freyr")
        from freyr_dspy.program import build_assignment

        program.apply_assignment(
            build_assignment(program.role_names, default_model="fake/tiny-count")
        )
        with pytest.raises(FakeLMError):
            program(message="Add a task called x")
    finally:
        unregister_fake("tiny-count")
