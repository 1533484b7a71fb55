"""The one evaluation core: records reduce to the same numbers in compile, search and eval."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.benchmark import EvalOptions, step_example
from freyr_dspy.compiling import OptimizerConfig
from freyr_dspy.compiling._compiler import compile_program, dev_episodes
from freyr_dspy.compiling._job import report_meta
from freyr_dspy.errors import FakeLMError
from freyr_dspy.evaluation import (
    EvalConfig,
    EvalSummary,
    StepRecord,
    evaluate,
    planned_steps,
    run_episodes,
    summarise,
)
from freyr_dspy.evaluation._aggregate import run_metrics
from freyr_dspy.evaluation._units import UnitKey, UnitResult
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Failure, RoleModel
from freyr_dspy.search import SearchSpace, search_assignments
from freyr_dspy.settings import Settings
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake
from tests.support import search_fixtures as fx

#: Right intents except for removals: two of the three skill cases succeed.
HALF = "fake/half-intent"
OPTIONS = EvalOptions(data_dir=Path("unused"))


def record(
    success: float,
    kind: str | None = None,
    failure: Failure | None = None,
    metrics: dict[str, float] | None = None,
) -> StepRecord:
    return StepRecord(
        benchmark="b",
        strategy="freyr",
        run=0,
        case="c",
        episode="e",
        step="s",
        success=success,
        metrics={"intents": success} if metrics is None else metrics,
        failure_kind=kind,
        diagnostics={"failure": failure.model_dump() if failure else None},
        input_tokens=90,
        output_tokens=10,
        lm_calls=2,
        seconds=0.5,
    )


RECORDS = (
    record(1.0),
    record(0.0, "state"),
    record(0.0, None, Failure(kind="model", detail="intent model failed: [x] timeout")),
)


def test_step_records_reduce_to_a_summary() -> None:
    summary = summarise(RECORDS, 4)  # one step never ran (its episode stopped on failure)

    assert summary.accuracy == 0.25  # the step that never ran counts as failed
    assert (summary.tokens, summary.latency) == (100.0, 0.5)  # per step that ran
    assert (summary.steps, summary.steps_run, summary.model_failures) == (4, 3, 1)
    assert summary.model_failure == "intent model failed: [x] timeout"
    assert summary.metrics == {"intents": 0.3333}
    assert summary.failure_kinds == {"state": 1}
    assert summary.value("tokens") == 100.0


def test_a_sub_score_a_step_lacks_counts_as_zero_and_nothing_run_scores_zero() -> None:
    summary = summarise([record(1.0, metrics={"tools": 1.0}), record(1.0, metrics={})], 2)
    assert summary.metrics == {"tools": 0.5}
    assert summarise([], 0) == EvalSummary(0.0, 0.0, 0.0, 0, 0)


def test_a_model_failure_kind_without_a_typed_failure_is_a_model_failure() -> None:
    summary = summarise([record(0.0, "model"), record(0.0, "retries")], 2)
    assert (summary.model_failures, summary.model_failure) == (1, "model")
    assert summary.failure_kinds == {"model": 1, "retries": 1}


def test_the_summary_reads_trial_attributes_written_before_it_existed() -> None:
    # a search trial's "evaluation" attribute as older versions stored it
    stored = {
        "accuracy": 0.5,
        "tokens": 812.5,
        "latency": 1.25,
        "steps": 4,
        "steps_run": 3,
        "model_failures": 0,
        "model_failure": None,
        "metrics": {"intents": 0.75},
        "failure_kinds": {"state": 1},
        "written_by_a_newer_version": True,
    }
    summary = EvalSummary.from_json(stored)
    assert (summary.accuracy, summary.tokens, summary.steps_run) == (0.5, 812.5, 3)
    del stored["written_by_a_newer_version"]
    assert summary.to_json() == stored


def test_eval_reports_the_numbers_of_the_summary_for_the_same_records() -> None:
    """The report's Steps % and cost per step are the summary's accuracy and cost."""
    unit = UnitResult(UnitKey("b", "freyr", 0, "e"), "c", 4, RECORDS, ("s1", "s2", "s3", "s4"))
    table = run_metrics([unit])
    summary = summarise(unit.records, unit.n_steps)
    assert table["steps_pct"] == pytest.approx(100 * summary.accuracy)
    assert table["tokens_in"] + table["tokens_out"] == pytest.approx(summary.tokens)
    assert table["seconds"] == summary.latency


@pytest.fixture
def skills() -> Iterator[None]:
    fx.install()
    register_fake(HALF.split("/", 1)[1], FunctionLM(half_intent))
    yield
    unregister_fake(HALF.split("/", 1)[1])
    fx.uninstall()


def half_intent(call: FakeCall) -> dict[str, Any] | None:
    if call.role == "intent" and call.inputs["message"].startswith("Remove"):
        return {"intents": ["list_tasks"]}
    return fx.intent_pro(call)


def half_program(benchmark: fx.SkillBenchmark, parameters: str = fx.PARAM_PRO) -> FreyrProgram:
    """Intents from ``HALF``, every other role from ``parameters``' model."""
    program = benchmark.make_program("freyr", OPTIONS)
    models = {role: parameters for role in program.role_names} | {"intent": HALF}
    return program.apply_assignment({role: RoleModel(model=m) for role, m in models.items()})


def test_compile_search_and_eval_score_the_same_program_alike(
    skills: None, settings: Settings
) -> None:
    """One program on the same episodes through all three commands: the same numbers."""
    benchmark = fx.SkillBenchmark()
    episodes = benchmark.episodes(OPTIONS)
    program = half_program(benchmark)
    examples = [step_example(e.steps[0]) for e in episodes]
    dev_progress: list[tuple[int, int]] = []
    compiled = compile_program(
        program,
        benchmark,
        OptimizerConfig(name="labeled", max_demos=0),
        settings=settings,
        options=OPTIONS,
        trainset=examples,
        devset=examples,
        progress=lambda done, total: dev_progress.append((done, total)),
    )
    searched = search_assignments(
        benchmark,
        SearchSpace(
            candidates={"*": (fx.PARAM_PRO,), "intent": (HALF,)},
            temperature=None,
            top_p=None,
            top_k=None,
            max_retries=(program.max_retries, program.max_retries),
        ),
        n_trials=1,
        split="test",
        settings=settings,
        cache=False,
        report=False,
    )
    run = evaluate(
        EvalConfig(
            benchmarks=(benchmark.name,),
            data_dir=Path(),
            strategies=("freyr",),
            default_model=fx.PARAM_PRO,
            model_specs=(f"intent={HALF}",),
            sampling_specs=(),
        )
    )

    assert compiled.before is not None
    trial = searched.trials[0].evaluation
    assert trial is not None
    from_search = EvalSummary.from_json(trial)
    without_latency = {**compiled.before.to_json(), "latency": None}
    assert {**from_search.to_json(), "latency": None} == without_latency
    assert math.isclose(compiled.before.accuracy, 2 / 3)
    assert dev_progress.count((0, 3)) == dev_progress.count((3, 3)) == 2  # before and after
    table = run_metrics(run.units)
    assert table["steps_pct"] == pytest.approx(100 * compiled.before.accuracy)
    assert table["tokens_in"] + table["tokens_out"] == pytest.approx(compiled.before.tokens)
    assert summarise(run.records, planned_steps(episodes)).metrics == compiled.before.metrics
    meta = report_meta(compiled, benchmark=benchmark.name, options=OPTIONS)
    assert (meta.scores.before, meta.scores.dev_size) == (0.6667, 3)
    assert meta.scores.tokens_per_request_before == round(compiled.before.tokens, 1)


def test_compile_scores_each_dev_example_as_a_one_step_episode(skills: None) -> None:
    benchmark = fx.SkillBenchmark()
    examples = [step_example(e.steps[0]) for e in benchmark.episodes(OPTIONS)]
    episodes = dev_episodes(examples)
    assert [e.steps for e in episodes] == [(ex.step,) for ex in examples]
    assert [e.id for e in episodes] == ["case-0", "case-1", "case-2"]


@pytest.mark.parametrize("num_threads", [1, 3])
def test_run_episodes_keeps_episode_order_and_reports_progress(
    skills: None, num_threads: int
) -> None:
    benchmark = fx.SkillBenchmark()
    program = half_program(benchmark)
    seen: list[tuple[int, int]] = []
    records = run_episodes(
        benchmark,
        program,
        benchmark.episodes(OPTIONS),
        run=2,
        strategy="label",
        num_threads=num_threads,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert [(r.episode, r.success) for r in records] == [
        ("case-0", 1.0),
        ("case-1", 0.0),
        ("case-2", 1.0),
    ]
    assert {(r.run, r.strategy) for r in records} == {(2, "label")}
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)


def test_run_episodes_raises_what_an_episode_raises(skills: None) -> None:
    benchmark = fx.SkillBenchmark()
    register_fake("silent", FunctionLM(lambda call: None))  # every call is unscripted
    try:
        program = half_program(benchmark, parameters="fake/silent")
        with pytest.raises(FakeLMError):
            run_episodes(benchmark, program, benchmark.episodes(OPTIONS), num_threads=2)
    finally:
        unregister_fake("silent")
