"""Aggregation and report rendering, on hand-made units and on a fake evaluation."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.evaluation import EvalConfig, StepRecord, UnitKey, UnitResult, evaluate
from freyr_dspy.evaluation._aggregate import aggregate_benchmark
from freyr_dspy.evaluation._report import (
    clean_json,
    flatten_scalars,
    format_interval,
    render_text,
    report_data,
    write_json,
)
from tests.support.tiny_benchmark import NAME, TinyBenchmark, install


def unit(
    strategy: str,
    run: int,
    episode: str,
    case: str,
    steps: list[tuple[float, int, int]],
    n_steps: int | None = None,
    kind: str = "domain",
) -> UnitResult:
    """A unit whose steps have (success, tokens in, tokens out); 2 s per step."""
    records = tuple(
        StepRecord(
            benchmark="b",
            strategy=strategy,
            run=run,
            case=case,
            episode=episode,
            step=f"s{i}",
            success=s,
            input_tokens=ti,
            output_tokens=to,
            seconds=2.0,
            failure_kind=None if s == 1 else kind,
            diagnostics={"expected": ["add"], "produced": ["remove"]} if s < 1 else {},
        )
        for i, (s, ti, to) in enumerate(steps)
    )
    planned = len(steps) if n_steps is None else n_steps
    ids = tuple(f"s{i}" for i in range(planned))
    return UnitResult(UnitKey("b", strategy, run, episode), case, planned, records, ids)


@pytest.fixture
def units() -> list[UnitResult]:
    """freyr: T1 runs score 100 %, 50 %, 0 %; native always 0 % at 4x the input tokens."""
    found = []
    for run, (a, b) in enumerate([(1, 1), (1, 0), (0, 0)]):
        found.append(unit("freyr", run, "e1", "T1", [(a, 100, 10)]))
        found.append(unit("freyr", run, "e2", "T1", [(b, 300, 30)]))
        found.append(unit("native", run, "e1", "T1", [(0, 400, 5)]))
        found.append(unit("native", run, "e2", "T1", [(0, 1200, 5)]))
        found.append(unit("freyr", run, "e3", "T2", [(1, 50, 1), (1, 50, 1)]))
        found.append(unit("native", run, "e3", "T2", [(0, 200, 1)], n_steps=2, kind="parse"))
    return found


def test_steps_pct_and_costs_with_hand_computed_intervals(units: list[UnitResult]) -> None:
    data = aggregate_benchmark(units, ["freyr", "native"])
    t1 = data["cases"]["T1"]["freyr"]
    # per-run Steps %: 100, 50, 0 -> mean 50, sd 50, half-width t(0.975, 2) * 50 / sqrt(3)
    assert t1["steps_pct"]["mean"] == pytest.approx(50.0)
    assert t1["steps_pct"]["half_width"] == pytest.approx(4.302652729749464 * 50 / math.sqrt(3))
    assert t1["tokens_in"]["mean"] == pytest.approx(200.0)
    assert t1["tokens_in"]["half_width"] == pytest.approx(0.0)
    assert t1["tokens_out"]["mean"] == pytest.approx(20.0)
    assert t1["seconds"]["mean"] == pytest.approx(2.0)
    assert t1["runs"] == 3 and t1["steps_per_run"] == 2
    # native reached 1 of 2 planned T2 steps: the unreached one counts as failed
    assert data["cases"]["T2"]["native"]["steps_pct"]["mean"] == 0.0
    assert data["cases"]["T2"]["native"]["steps_per_run"] == 2
    # "all": freyr per run (2 + 2 = 4 planned steps): 4/4, 3/4, 2/4
    assert data["cases"]["all"]["freyr"]["steps_pct"]["mean"] == pytest.approx(75.0)


def test_token_ratio_against_native(units: list[UnitResult]) -> None:
    ratios = aggregate_benchmark(units, ["freyr", "native"])["token_ratio"]
    assert ratios["freyr"]["T1"] == pytest.approx(200 / 800)
    assert ratios["freyr"]["T2"] == pytest.approx(50 / 200)
    assert "native" not in ratios
    assert aggregate_benchmark(units, ["freyr"])["token_ratio"] == {}


def test_wilcoxon_rows_are_paired_per_step_and_corrected(units: list[UnitResult]) -> None:
    rows = aggregate_benchmark(units, ["freyr", "native"])["wilcoxon"]
    by = {(r["case"], r["metric"]): r for r in rows}
    # T1 success: freyr 1,1,1,0,0,0 vs native all 0 -> 3 non-zero pairs -> exact p 2/8
    assert by[("T1", "steps_pct")]["pairs"] == 6
    assert by[("T1", "steps_pct")]["p"] == pytest.approx(0.25)
    # T2 tokens in: only the step both reached is paired (3 runs x 1 step)
    assert by[("T2", "tokens_in")]["pairs"] == 3
    assert by[("T2", "steps_pct")]["pairs"] == 6
    # one pair of contestants: Bonferroni leaves p unchanged
    assert all(r["p_bonferroni"] == r["p"] for r in rows)


def test_steps_pct_of_each_run_in_run_order(units: list[UnitResult]) -> None:
    cases = aggregate_benchmark(list(reversed(units)), ["freyr", "native"])["cases"]
    assert cases["T1"]["freyr"]["steps_pct_per_run"] == [100.0, 50.0, 0.0]
    assert cases["all"]["freyr"]["steps_pct_per_run"] == [100.0, 75.0, 50.0]
    assert cases["T2"]["native"]["steps_pct_per_run"] == [0.0, 0.0, 0.0]


def test_head_to_head_counts_steps_won_and_lost_with_a_sign_test(
    units: list[UnitResult],
) -> None:
    # nlt wins e1 in every run and loses e2 in run 0 (where freyr completed it)
    nlt = [unit("nlt", run, "e1", "T1", [(1, 400, 5)]) for run in range(3)] + [
        unit("nlt", run, "e2", "T1", [(0, 400, 5)]) for run in range(3)
    ]
    rows = aggregate_benchmark(units + nlt, ["freyr", "native", "nlt"])["head_to_head"]
    by = {(r["case"], r["a"], r["b"]): r for r in rows}
    freyr_native = by[("T1", "freyr", "native")]
    # freyr completed 3 of the 6 paired T1 steps, native none: 3 won, 0 lost, p = 2 / 2**3
    assert (freyr_native["a_won"], freyr_native["b_won"], freyr_native["pairs"]) == (3, 0, 6)
    assert freyr_native["p"] == pytest.approx(0.25)
    assert freyr_native["p_bonferroni"] == pytest.approx(0.75)
    # freyr vs nlt on T1: e1 1,1,0 vs 1,1,1 -> lost run 2; e2 1,0,0 vs 0,0,0 -> won run 0
    freyr_nlt = by[("T1", "freyr", "nlt")]
    assert (freyr_nlt["a_won"], freyr_nlt["b_won"]) == (1, 1)
    assert freyr_nlt["p"] == pytest.approx(1.0)
    # nlt never ran T2: no pairs, so no test
    t2 = by[("T2", "freyr", "nlt")]
    assert (t2["pairs"], t2["a_won"], t2["b_won"], t2["p"]) == (0, 0, 0, None)


def test_bonferroni_family_is_the_number_of_pairs(units: list[UnitResult]) -> None:
    third = [
        unit("nlt", u.key.run, u.key.episode, u.case, [(1, 1, 1)] * u.n_steps)
        for u in units
        if u.key.strategy == "freyr"
    ]
    rows = aggregate_benchmark(units + third, ["freyr", "native", "nlt"])["wilcoxon"]
    row = next(
        r
        for r in rows
        if (r["case"], r["metric"], r["a"], r["b"]) == ("T1", "steps_pct", "freyr", "native")
    )
    assert row["p_bonferroni"] == pytest.approx(min(1.0, 3 * row["p"]))
    equal = next(
        r
        for r in rows
        if (r["case"], r["metric"], r["a"], r["b"]) == ("T1", "seconds", "freyr", "nlt")
    )
    assert equal["p"] == 1.0  # every difference is zero


def test_failures_variance_and_step_diagnostics(units: list[UnitResult]) -> None:
    data = aggregate_benchmark(units, ["freyr", "native"])
    assert data["failures"]["native"] == {"domain": 6, "parse": 3}
    assert data["failures"]["freyr"] == {"domain": 3}
    # freyr inputs: e1 [1,1,0], e2 [1,0,0], e3 two steps [1,1,1] each
    means = [2 / 3, 1 / 3, 1.0, 1.0]
    mean = sum(means) / 4
    assert data["variance"]["freyr"]["across_inputs"] == pytest.approx(
        sum((m - mean) ** 2 for m in means) / 4
    )
    step = next(
        s
        for s in data["steps"]
        if s["strategy"] == "native" and s["episode"] == "e3" and s["step"] == "s1"
    )
    assert step["failure_kinds"] == {"not_reached": 3} and step["success_rate"] == 0.0
    assert step["reached"] == 0
    failed = next(s for s in data["steps"] if s["strategy"] == "freyr" and s["episode"] == "e2")
    assert failed["success_rate"] == pytest.approx(1 / 3)
    assert (failed["expected"], failed["produced"]) == (["add"], ["remove"])


def test_format_interval() -> None:
    assert format_interval({"mean": 50.0, "half_width": 12.345}, 1) == "50.0 ± 12.3"
    assert format_interval({"mean": 3.0, "half_width": None}, 2) == "3.00"
    assert format_interval({"mean": None, "half_width": None}, 0) == "-"


def test_clean_json_and_flatten() -> None:
    assert clean_json({"a": math.nan, "b": [1.0, math.inf], 3: Path("x")}) == {
        "a": None,
        "b": [1.0, None],
        "3": "x",
    }
    assert flatten_scalars({"a": 1, "b": {"c": 0.5, "d": [1]}, "e": None}) == {
        "a": 1,
        "b.c": 0.5,
        "e": None,
    }


@pytest.fixture
def fake_evaluation(monkeypatch: pytest.MonkeyPatch) -> tuple[TinyBenchmark, Any]:
    tiny = install(monkeypatch)
    evaluation = evaluate(
        EvalConfig(
            benchmarks=(NAME,),
            data_dir=Path(),
            runs=2,
            strategies=("freyr", "lazy"),
            default_model="fake/rules",
        )
    )
    return tiny, evaluation


def test_report_json_shape(fake_evaluation: tuple[TinyBenchmark, Any], tmp_path: Path) -> None:
    tiny, evaluation = fake_evaluation
    data = report_data(evaluation)
    assert set(data) == {"config", "benchmarks", "records"}
    assert data["config"]["runs"] == 2 and data["config"]["contestants"] == {
        NAME: ["freyr", "lazy"]
    }
    bench = data["benchmarks"][NAME]
    assert set(bench) == {
        "cases",
        "wilcoxon",
        "head_to_head",
        "token_ratio",
        "variance",
        "failures",
        "steps",
        "summary",
    }
    assert list(bench["cases"]) == ["add", "done", "all"]
    assert bench["cases"]["all"]["freyr"]["steps_pct"]["mean"] == 100.0
    assert bench["cases"]["all"]["lazy"]["steps_pct"]["mean"] == 0.0
    assert bench["summary"] == {"records": 16, "nested": {"mean": 0.5}}
    assert tiny.summarized == [16] and len(data["records"]) == 16
    path = tmp_path / "out" / "results.json"
    write_json(path, data)
    assert json.loads(path.read_text()) == json.loads(json.dumps(data, allow_nan=False))


def test_render_text_table(fake_evaluation: tuple[TinyBenchmark, Any]) -> None:
    text = render_text(report_data(fake_evaluation[1]))
    lines = text.splitlines()
    assert lines[0].startswith(f"{NAME} - bootstrap mode, 2 run(s), model fake/rules")
    header = next(line for line in lines if line.startswith("Case  Strategy"))
    assert ["Steps %", "Tokens in/step", "Tokens out/step", "Seconds/step"] == [
        h.strip() for h in header.split("  ") if h.strip()
    ][2:]
    add_row = next(line for line in lines if line.startswith("add "))
    assert add_row.split()[:5] == ["add", "freyr", "100.0", "±", "0.0"]
    assert "freyr vs lazy" in text and "Bonferroni x1" in text
    assert "Steps % per run (all):\n  freyr: 100.0 / 100.0\n  lazy: 0.0 / 0.0" in text
    assert "  freyr vs lazy: 8 / 0 of 8 paired steps, p 0.008" in text
    assert "nested.mean: 0.5" in text
    assert "lazy: domain=8" in text and "add-milk/s1: 0.0 % [domain x2]" in text
    assert "Input tokens vs native" not in text


def test_diagnostics_read_prefixed_keys_and_fall_back_to_calls() -> None:
    record = StepRecord(
        benchmark="b",
        strategy="x",
        run=0,
        case="c",
        episode="e",
        step="s",
        success=0.0,
        diagnostics={"expected_intents": ["a"]},
        calls=[{"tool": "b"}],
    )
    failed = UnitResult(UnitKey("b", "x", 0, "e"), "c", 2, (record,), ("s", "t"))
    rows = aggregate_benchmark([failed], ["x"])["steps"]
    assert [(r["step"], r["expected"], r["produced"]) for r in rows] == [
        ("s", ["a"], ["b"]),
        ("t", None, None),
    ]
    text = render_text(
        {
            "config": {"mode": "iterative", "runs": 1, "default_model": "m"},
            "benchmarks": {"b": clean_json(aggregate_benchmark([failed], ["x"]))},
        }
    )
    assert "1 step(s) never reached" in text and "e/s: 0.0 % [unknown x1]" in text
