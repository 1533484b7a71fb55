"""The bench scripts run: a script that only runs on a long model job must not rot unseen."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from freyr_dspy.testing import unregister_fake

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_script(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # the scripts import their siblings (provenance)
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # a dataclass looks its module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def test_the_overhead_bench_splits_a_step_into_its_layers() -> None:
    bench = load_script("bench_overhead")
    try:
        report = bench.measure_overhead(3)
    finally:
        unregister_fake("bench_instant")
    split = report["mean_ms_split"]
    assert report["lm_calls_per_step"] == 5 and report["tools_in_catalog"] == 16
    assert split["dspy_adapter_format_parse"] > 0 and split["fake_engine"] > 0
    assert report["overhead_ms_per_step"] > 0


def test_saved_eval_results_keep_the_tables_not_the_steps_or_paths() -> None:
    save = load_script("save_eval_results")
    report = {
        "config": {"benchmarks": ["b"], "data_dir": "/somewhere/data", "runs": 1, "jobs": 2},
        "benchmarks": {"b": {"cases": {"all": {"freyr": {}}}, "steps": [{"step": "T1.1"}]}},
        "records": [
            {"strategy": "freyr", "run": 0, "episode": "e1"},
            {"strategy": "freyr", "run": 0, "episode": "e1"},
        ],
    }
    summary = save.summarise(report, command="freyr eval --benchmark b")
    assert summary["benchmarks"] == {"b": {"cases": {"all": {"freyr": {}}}}}
    assert summary["config"] == {"benchmarks": ["b"], "runs": 1}
    assert (summary["steps_recorded"], summary["units_recorded"]) == (2, 1)
    assert summary["command"] == "freyr eval --benchmark b"


def test_the_search_bench_compares_single_model_and_mixed_assignments(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import json

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import search_fixtures as fx

    fx.install()
    monkeypatch.chdir(tmp_path)  # the search cache lives under the working directory
    try:
        bench = load_script("bench_search")
        models = f"{fx.PARAM_PRO},{fx.INTENT_PRO}"
        argv = ["--benchmark", "skills", "--limit", "3", "--trials", "24", "--models", models]
        assert bench.main([*argv, "--out", str(tmp_path / "out")]) == 0
    finally:
        fx.uninstall()
        sys.path.remove(str(Path(__file__).resolve().parent))
    summary = json.loads((tmp_path / "out" / "bench_search.json").read_text())
    singles = summary["single_models"]
    # neither fake can do both halves of the job alone; the mix of the two can
    assert set(singles) == {f"freyr, all {fx.PARAM_PRO}", f"freyr, all {fx.INTENT_PRO}"}
    assert all(row["accuracy"] == 0.0 for row in singles.values())
    best = summary["best_mixed"]
    assert best["accuracy"] == 1.0 and summary["verdict"]["wins_on_accuracy"]
    assert best["trial"] in [row["trial"] for row in summary["mixed_on_pareto_front"]]
    assert f"intent={fx.INTENT_PRO}" in best["models"]
    assert f"parameters={fx.PARAM_PRO}" in best["models"]


def _eval_file(
    path: Path, label: str, successes: list[float | None], sampling: str = "seed=0"
) -> Path:
    """An eval --out file of one run; a success of None is a step its episode never reached."""
    import json

    config = {"benchmarks": ["b"], "mode": "bootstrap", "runs": 1, "sampling_specs": [sampling]}
    steps = [{"strategy": label, "episode": "e", "step": f"s{i}"} for i in range(len(successes))]
    records = [
        {
            "benchmark": "b",
            "strategy": label,
            "run": 0,
            "episode": "e",
            "step": f"s{i}",
            "success": value,
            "input_tokens": 100 * (i + 1),
            "output_tokens": 10,
            "seconds": 1.0,
        }
        for i, value in enumerate(successes)
        if value is not None
    ]
    report = {"config": config, "benchmarks": {"b": {"steps": steps}}, "records": records}
    path.write_text(json.dumps(report))
    return path


def test_contestants_of_separate_eval_files_are_paired_step_by_step(tmp_path: Path) -> None:
    import json

    compare = load_script("compare_eval_runs")
    old = _eval_file(tmp_path / "old.json", "freyr", [1, 0, 0, 0, 1])
    new = _eval_file(tmp_path / "new.json", "freyr+x", [1, 1, 1, 0, 0])
    out = tmp_path / "cmp.json"
    assert compare.main([str(old), str(new), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["contestants"]["freyr"]["steps_pct"] == 40.0
    assert summary["contestants"]["freyr+x"]["steps_pct"] == 60.0
    assert summary["contestants"]["freyr+x"]["input_tokens_mean"] == 300.0
    [pair] = summary["pairs"]
    assert (pair["a"], pair["b"], pair["pairs"], pair["a_won"], pair["b_won"]) == (
        "freyr",
        "freyr+x",
        5,
        1,
        2,
    )


def test_files_measured_another_way_are_not_paired(tmp_path: Path, capsys: Any) -> None:
    compare = load_script("compare_eval_runs")
    old = _eval_file(tmp_path / "old.json", "freyr", [1, 0])
    other_seed = _eval_file(tmp_path / "new.json", "freyr+x", [1, 1], sampling="seed=1")
    assert compare.main([str(old), str(other_seed)]) == 2
    assert "measured with another sampling_specs" in capsys.readouterr().err
    assert compare.main([str(old), str(old)]) == 2  # the same steps of one contestant twice


def test_a_step_a_contestant_never_reached_counts_as_failed(tmp_path: Path) -> None:
    import json

    compare = load_script("compare_eval_runs")
    stopped = _eval_file(tmp_path / "old.json", "freyr", [1, 0, None, None])
    went_on = _eval_file(tmp_path / "new.json", "freyr+x", [1, 0, 1, 0])
    out = tmp_path / "cmp.json"
    assert compare.main([str(stopped), str(went_on), "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    freyr = summary["contestants"]["freyr"]
    assert (freyr["steps"], freyr["reached"], freyr["steps_pct"]) == (4, 2, 25.0)
    assert freyr["input_tokens_mean"] == 150.0  # tokens of the steps it ran
    [pair] = summary["pairs"]
    assert (pair["pairs"], pair["a_won"], pair["b_won"]) == (4, 0, 1)


def _call(errors: list[str], ok: bool, attempts: int = 4) -> dict[str, Any]:
    return {"tool": "create_room", "attempts": attempts, "errors": errors, "outcome": {"ok": ok}}


def test_retry_stats_tell_repaired_calls_from_calls_that_repeated_one_error(
    tmp_path: Path,
) -> None:
    stats_script = load_script("retry_stats")
    same = ["room_from should be provided"] * 4
    records = [
        {"strategy": "freyr", "calls": [_call([], True), _call(same, False)]},
        {"strategy": "freyr", "calls": [_call(["unknown room 'Attic'"], True)]},
        {"strategy": "freyr+exclude_blamed", "calls": [_call(["a", "b", "c", "d"], False)]},
        {"strategy": "freyr+exclude_blamed", "calls": [_call(["a"], False, attempts=1)]},
    ]
    report = tmp_path / "eval.json"
    report.write_text(json.dumps({"config": {}, "records": records}))
    out = tmp_path / "stats.json"
    assert stats_script.main([str(report), "--out", str(out)]) == 0
    counts = json.loads(out.read_text())
    assert counts["freyr"] == {"calls": 3, "failing": 2, "repaired": 1, "alike_every_attempt": 1}
    # Different errors on every attempt, or a single attempt, are not "alike on every attempt".
    assert counts["freyr+exclude_blamed"] == {
        "calls": 2,
        "failing": 2,
        "repaired": 0,
        "alike_every_attempt": 0,
    }


def test_retry_stats_refuse_a_file_without_records_in_one_line(tmp_path: Path) -> None:
    stats_script = load_script("retry_stats")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(SystemExit, match="not a freyr eval --out file"):
        stats_script.main([str(broken)])


def test_the_speed_bench_measures_the_suite_with_a_fake_and_compares_same_mode_contestants(
    tmp_path: Path,
) -> None:
    from freyr_dspy.testing import FunctionLM, register_fake

    bench = load_script("bench_speed")
    assert bench.Contestant.parse("freyr+abstain:reply") == bench.Contestant("freyr+abstain", False)
    suite = bench.suite_benchmark()
    episodes = bench.spread(
        suite.episodes(bench.EvalOptions(data_dir=tmp_path)), 1, lambda e: e.case
    )
    assert len(episodes) == len({e.case for e in episodes}) == 5  # one request per category

    replies = {"intent": {"intents": ["conversation"]}, "chat": {"reply": "hello"}}
    register_fake("speed", FunctionLM(lambda call: replies[call.role]))
    try:
        program = bench.build(suite, bench.EvalOptions(data_dir=tmp_path), "freyr", "fake/speed")
        chat_row = next(e for e in episodes if e.case == "no-tool-chat")
        [row] = bench.measure_episode(suite, program, chat_row, bench.Contestant("freyr", True))
    finally:
        unregister_fake("speed")
    assert row["exact"] == 1.0 and row["calls"] == [] and row["lm_calls"] == 2
    rows = [
        {**row, "model": "m", "benchmark": "suite", "contestant": name, "seconds": s}
        for name, s in (("native:calls", 2.0), ("freyr:calls", 1.0))
    ]
    text, summaries = bench.table(rows)
    assert "| freyr:calls | 1.00 | 1.00 | 0.50 |" in text
    assert summaries["m suite"]["native:calls"]["n"] == 1
