"""The evaluation harness on fakes: plan, units, parallel runs, resume and checkpoints."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import freyr_dspy.benchmarks as benchmarks_module
from freyr_dspy.errors import (
    ConfigError,
    DataError,
    FakeLMError,
    UnknownNameError,
    UnknownRoleError,
)
from freyr_dspy.evaluation import EvalConfig, EvalRun, StepRecord, evaluate
from freyr_dspy.evaluation import _harness as harness_module
from freyr_dspy.evaluation._plan import build_unit_program, make_plan, seeded
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Failure, RoleModel, Sampling
from freyr_dspy.strategies import STRATEGIES
from freyr_dspy.testing import unregister_fake
from tests.support.tiny_benchmark import (
    LAZY,
    NAME,
    CountingRules,
    TinyBenchmark,
    install,
    install_fake,
)


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> TinyBenchmark:
    # NOTE: only the tiny benchmark: the real ones are tested by their own suites.
    monkeypatch.setattr(benchmarks_module.BENCHMARKS, "modules", ())
    return install(monkeypatch)


@pytest.fixture
def counter() -> Any:
    counting = CountingRules()
    install_fake("eval-count", counting)
    yield counting
    unregister_fake("eval-count")


def config(**changes: Any) -> EvalConfig:
    base = EvalConfig(
        benchmarks=(NAME,),
        data_dir=Path(),
        strategies=("freyr", "lazy"),
        runs=2,
        default_model="fake/eval-count",
    )
    return replace(base, **changes)


def comparable(evaluation: EvalRun) -> list[dict[str, Any]]:
    """Records without wall-clock seconds (the only values that differ between runs)."""
    return [{**r.to_json(), "seconds": None, "role_seconds": None} for r in evaluation.records]


def track_units(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, int, str]]:
    ran: list[tuple[str, str, int, str]] = []
    real = harness_module.run_unit

    def tracking(unit: Any, cfg: EvalConfig) -> Any:
        ran.append((unit.key.benchmark, unit.key.strategy, unit.key.run, unit.key.episode))
        return real(unit, cfg)

    monkeypatch.setattr(harness_module, "run_unit", tracking)
    return ran


def test_plan_orders_units_and_builds_fresh_programs(tiny: TinyBenchmark, counter: Any) -> None:
    plan = make_plan(config(limit=3))
    keys = [(u.key.run, u.key.episode, u.key.strategy) for u in plan.units]
    assert keys[:4] == [
        (0, "add-milk", "freyr"),
        (0, "add-milk", "lazy"),
        (0, "add-bread", "freyr"),
        (0, "add-bread", "lazy"),
    ]
    assert len(keys) == 2 * 3 * 2 and [c.label for c in plan.contestants[NAME]] == ["freyr", "lazy"]


def test_evaluate_runs_every_unit_with_fresh_lm_calls(tiny: TinyBenchmark, counter: Any) -> None:
    seen: list[tuple[int, int]] = []
    evaluation = evaluate(config(), progress=lambda done, total: seen.append((done, total)))
    assert len(evaluation.units) == 2 * 4 * 2 and evaluation.resumed == 0
    assert seen[0] == (0, 16) and seen[-1] == (16, 16)
    freyr = [r for r in evaluation.records if r.strategy == "freyr"]
    lazy = [r for r in evaluation.records if r.strategy == "lazy"]
    assert all(r.success == 1.0 for r in freyr) and all(r.success == 0.0 for r in lazy)
    assert {tuple(r.role_seconds) for r in freyr} == {("intent", "parameters", "summary")}
    # no cache: both runs paid for their calls (freyr: intent, parameters, summary; lazy: chat)
    assert len(counter.calls) == 2 * 4 * 3 + 2 * 4 * 1
    assert {r.run for r in evaluation.records} == {0, 1}


def test_parallel_jobs_give_the_same_records(tiny: TinyBenchmark, counter: Any) -> None:
    serial = evaluate(config())
    parallel = evaluate(config(jobs=3))
    assert comparable(parallel) == comparable(serial)


def test_resume_skips_finished_units_and_equals_an_uninterrupted_run(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = evaluate(config())
    checkpoint = tmp_path / "out.json.checkpoint.jsonl"
    counter.fail_after = len(counter.calls) + 5  # dies inside the 3rd unit (3+1+1 calls)
    with pytest.raises(FakeLMError):
        evaluate(config(), checkpoint=checkpoint)
    finished = [json.loads(line)["unit"] for line in checkpoint.read_text().splitlines()[1:]]
    assert len(finished) == 2
    counter.fail_after = None
    ran = track_units(monkeypatch)
    resumed = evaluate(config(), checkpoint=checkpoint)
    finished_keys = {(u["benchmark"], u["strategy"], u["run"], u["episode"]) for u in finished}
    assert not finished_keys & set(ran) and len(ran) == 16 - 2
    assert resumed.resumed == 2
    assert comparable(resumed) == comparable(reference)
    ran.clear()
    evaluate(config(), checkpoint=checkpoint)  # everything finished: nothing runs again
    assert ran == []


def test_keyboard_interrupt_in_parallel_keeps_finished_units(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck.jsonl"
    counter.fail_after, counter.error = 10, KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        evaluate(config(jobs=2), checkpoint=checkpoint)
    saved = len(checkpoint.read_text().splitlines()) - 1
    assert 1 <= saved < 16
    counter.fail_after = None
    assert evaluate(config(jobs=2), checkpoint=checkpoint).resumed == saved


def test_more_runs_reuse_finished_units(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoint = tmp_path / "ck.jsonl"
    evaluate(config(runs=1), checkpoint=checkpoint)
    ran = track_units(monkeypatch)
    assert evaluate(config(runs=2), checkpoint=checkpoint).resumed == 8
    assert {key[2] for key in ran} == {1}


def test_other_configuration_is_refused_unless_restarted(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck.jsonl"
    evaluate(config(runs=1), checkpoint=checkpoint)
    changed = config(runs=1, sampling_specs=("temperature=0.1",))
    with pytest.raises(ConfigError, match=r"different configuration \(differs in: sampling_specs"):
        evaluate(changed, checkpoint=checkpoint)
    with pytest.raises(ConfigError, match="--restart"):
        evaluate(config(runs=1, mode="iterative"), checkpoint=checkpoint)
    assert evaluate(changed, checkpoint=checkpoint, restart=True).resumed == 0


def test_corrupt_last_line_is_dropped_with_a_warning(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkpoint = tmp_path / "ck.jsonl"
    evaluate(config(runs=1, limit=1), checkpoint=checkpoint)
    lines = checkpoint.read_text().splitlines()
    checkpoint.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])  # killed mid-write
    with caplog.at_level(logging.WARNING):
        resumed = evaluate(config(runs=1, limit=1), checkpoint=checkpoint)
    assert "incomplete last line" in caplog.text
    assert resumed.resumed == 1 and len(resumed.units) == 2
    assert len(checkpoint.read_text().splitlines()) == 3  # header + 2 valid units


def test_corrupt_middle_line_is_a_data_error(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck.jsonl"
    evaluate(config(runs=1, limit=1), checkpoint=checkpoint)
    lines = checkpoint.read_text().splitlines()
    checkpoint.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n")
    with pytest.raises(DataError, match=r"ck.jsonl:2: corrupt checkpoint line"):
        evaluate(config(runs=1, limit=1), checkpoint=checkpoint)


def test_iterative_mode_counts_unreached_steps_as_failed(tiny: TinyBenchmark, counter: Any) -> None:
    evaluation = evaluate(config(runs=1, mode="iterative"))
    lazy = [u for u in evaluation.units if u.key.strategy == "lazy"]
    assert all(u.n_steps == 2 and len(u.records) == 1 for u in lazy)
    freyr = [u for u in evaluation.units if u.key.strategy == "freyr"]
    assert all(len(u.records) == 2 and u.records[1].success == 1.0 for u in freyr)


def test_bad_names_and_specs_fail_before_any_call(
    tiny: TinyBenchmark, counter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(STRATEGIES, "other", replace(LAZY, name="other"))
    with pytest.raises(UnknownNameError, match="Did you mean 'freyr'"):
        evaluate(config(strategies=("freyrr",)))
    with pytest.raises(UnknownNameError, match="benchmark"):
        evaluate(config(benchmarks=("nope",)))
    with pytest.raises(ConfigError, match="cannot run strategy 'other'; it runs freyr, lazy"):
        make_plan(config(strategies=("freyr", "other")))
    with pytest.raises(UnknownRoleError, match="intnet"):
        evaluate(config(model_specs=("intnet=fake/rules",)))
    with pytest.raises(ConfigError, match="sampling"):
        evaluate(config(sampling_specs=("temprature=0.1",)))
    assert counter.calls == []


def test_a_switched_strategy_runs_beside_the_plain_one(tiny: TinyBenchmark, counter: Any) -> None:
    cfg = config(runs=1, limit=2, strategies=("freyr", "freyr+calibrate"))
    plan = make_plan(cfg)
    plain, switched = plan.contestants[NAME]
    assert (switched.label, switched.strategy) == ("freyr+calibrate", "freyr+calibrate")
    assert build_unit_program(tiny, switched, cfg, run=0).strategy.config() == {"calibrate": True}
    assert build_unit_program(tiny, plain, cfg, run=0).strategy.config() == {}
    evaluation = evaluate(cfg)
    # a fake model cannot score continuations, so the calibrated variant keeps each plan
    by_label = {
        label: [r.success for r in evaluation.records if r.strategy == label]
        for label in ("freyr", "freyr+calibrate")
    }
    assert by_label == {"freyr": [1.0, 1.0], "freyr+calibrate": [1.0, 1.0]}


@pytest.mark.parametrize(
    ("label", "error", "message"),
    [
        ("freyr+nope", ConfigError, "takes no setting 'nope'"),
        ("lazy+calibrate", ConfigError, "takes no setting 'calibrate'"),
        ("freyr+", ConfigError, "none empty"),
        ("freyrr+calibrate", UnknownNameError, "Did you mean 'freyr'"),
    ],
)
def test_bad_switches_fail_before_any_call(
    tiny: TinyBenchmark, counter: Any, label: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        evaluate(config(strategies=(label,)))
    assert counter.calls == []


def test_role_specs_apply_to_the_strategies_that_have_the_role(
    tiny: TinyBenchmark, counter: Any
) -> None:
    evaluation = evaluate(
        config(runs=1, limit=1, default_model="fake/rules", model_specs=("chat=fake/eval-count",))
    )
    # freyr's intent/parameters/summary used fake/rules; only lazy's chat reached the counter
    assert [c.role for c in counter.calls] == ["chat"]
    assert [r.success for r in evaluation.records] == [1.0, 0.0]


def test_seeds_vary_per_run_where_the_seed_decides_the_sample() -> None:
    embedded = RoleModel(model="embedded/smollm2-135m", sampling=Sampling(temperature=0.8))
    assert seeded(embedded, 0).sampling.seed == 0 and seeded(embedded, 3).sampling.seed == 3
    assert seeded(embedded, 3).sampling.temperature == 0.8
    explicit = RoleModel(model="ollama_chat/x", sampling=Sampling(seed=10))
    assert seeded(explicit, 2).sampling.seed == 12
    remote = RoleModel(model="ollama_chat/x")
    assert seeded(remote, 2) == remote


def test_compiled_program_contestant(
    tiny: TinyBenchmark, counter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = tmp_path / "todo-compiled.json"
    artifact.write_text("{}")
    loaded: list[Path] = []

    def load(path: Path, *, settings: Any = None, toolbox: Any = None) -> FreyrProgram:
        loaded.append(path)
        program = FreyrProgram("todo", strategy="freyr")
        program.apply_assignment(
            {r: RoleModel(model="fake/eval-count") for r in program.role_names}
        )
        return program

    monkeypatch.setattr("freyr_dspy.evaluation._plan.load", load)
    evaluation = evaluate(config(runs=1, strategies=("lazy",), programs=(artifact,)))
    assert [c.label for c in evaluation.plan.contestants[NAME]] == ["lazy", "todo-compiled"]
    compiled = [r for r in evaluation.records if r.strategy == "todo-compiled"]
    assert len(compiled) == 4 and all(r.success == 1.0 for r in compiled)
    assert len(loaded) == 1 + 4  # once to check it up front, then once per unit


def test_unequal_retry_budgets_are_named_before_the_run(
    tiny: TinyBenchmark,
    counter: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def load(path: Path, *, settings: Any = None, toolbox: Any = None) -> FreyrProgram:
        program = FreyrProgram("todo", strategy="freyr", max_retries=int(path.stem[-1]))
        program.apply_assignment(
            {r: RoleModel(model="fake/eval-count") for r in program.role_names}
        )
        return program

    monkeypatch.setattr("freyr_dspy.evaluation._plan.load", load)
    with caplog.at_level(logging.WARNING):
        make_plan(
            config(runs=1, strategies=(), programs=(tmp_path / "a1.json", tmp_path / "b1.json"))
        )
    assert "retry budgets" not in caplog.text
    with caplog.at_level(logging.WARNING):
        make_plan(
            config(runs=1, strategies=(), programs=(tmp_path / "r0.json", tmp_path / "r3.json"))
        )
    assert "different retry budgets (r0 0, r3 3)" in caplog.text


def test_records_are_plain_json(tiny: TinyBenchmark, counter: Any) -> None:
    record = evaluate(config(runs=1, limit=1)).records[0]
    assert isinstance(record, StepRecord)
    json.dumps(record.to_json(), allow_nan=False)


def test_a_records_failure_is_typed_after_a_json_round_trip() -> None:
    failure = Failure(kind="retries", detail="retries exhausted for add_task")
    diagnostics = {"failure": failure.model_dump()}
    record = StepRecord("b", "freyr", 0, "c", "e", "s", 0.0, diagnostics=diagnostics)
    assert StepRecord.from_json(record.to_json()).failure == failure
    assert StepRecord("b", "freyr", 0, "c", "e", "s", 1.0).failure is None


def test_default_contestants_are_the_installed_strategies(
    tiny: TinyBenchmark,
    counter: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(tiny, "strategies", ("freyr", "not-installed", "lazy"))
    with caplog.at_level(logging.WARNING):
        plan = make_plan(config(strategies=(), limit=1))
    # freyr runs as the model's preset: what a user gets without naming a strategy
    assert [c.label for c in plan.contestants[NAME]] == ["preset", "lazy"]
    assert "not installed: not-installed" in caplog.text
