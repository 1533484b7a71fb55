"""The bench scripts run: a script that only runs on a long model job must not rot unseen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.testing import unregister_fake
from tests.support.scripts import load_script


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


def test_the_search_bench_compares_single_model_and_mixed_assignments(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from tests.support import search_fixtures as fx

    fx.install()
    monkeypatch.chdir(tmp_path)  # the search cache lives under the working directory
    try:
        bench = load_script("bench_search")
        models = f"{fx.PARAM_PRO},{fx.INTENT_PRO}"
        argv = ["--benchmark", "skills", "--limit", "3", "--trials", "24", "--models", models]
        assert bench.main([*argv, "--out", str(tmp_path / "out")]) == 0
    finally:
        fx.uninstall()
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


def test_the_speed_bench_measures_the_suite_with_a_fake_and_compares_same_mode_contestants(
    tmp_path: Path,
) -> None:
    from freyr_dspy.testing import FunctionLM, register_fake

    bench = load_script("bench_speed")
    assert bench.Contestant.parse("freyr+abstain:reply") == bench.Contestant("freyr+abstain", False)
    lookup = bench.Contestant.parse("freyr@lookup4")
    assert (
        lookup == bench.Contestant("freyr", True, "lookup4")
        and lookup.name == "freyr:calls@lookup4"
    )
    with pytest.raises(SystemExit, match="grammar-first or lookupN"):
        bench.Contestant.parse("freyr:calls@fast")
    both = bench.Contestant.parse("freyr:calls@compact,warmed")
    assert both.variants == {"compact", "warmed"} and both.name == "freyr:calls@compact,warmed"
    with pytest.raises(SystemExit, match="@fast"):
        bench.Contestant.parse("freyr:calls@warmed,fast")
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
        for name, s in (("native:calls", 2.0), ("freyr:calls", 1.0), ("freyr:calls@lookup2", 0.5))
    ]
    text, summaries = bench.table(rows)
    assert "| freyr:calls | 1.00 | 1.00 | 0.50 |" in text
    assert "| freyr:calls@lookup2 | 1.00 | 0.50 | 0.25 |" in text  # against native's default
    assert summaries["m suite"]["native:calls"]["n"] == 1


def test_the_bench_helper_keeps_resumable_rows_with_the_code_that_made_them(
    tmp_path: Path, monkeypatch: Any
) -> None:
    bench = load_script("_bench")
    monkeypatch.setattr(bench, "code_version", lambda: "abc1234")
    out = tmp_path / "runs" / "rows.json"
    assert bench.load_rows(out) == []  # a new file: nothing to skip
    bench.save_rows(out, "what was measured", [{"id": "r1", "ok": True}])
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document == {
        "about": "what was measured",
        "code": "abc1234",
        "rows": [{"id": "r1", "ok": True}],
    }
    assert bench.load_rows(out, missing_ok=False) == document["rows"]
    table = bench.markdown_table(("a", "b"), [(1, "x")])
    assert table == ["| a | b |", "|---|---|", "| 1 | x |"]
    assert str(bench.median_or_nan([])) == "nan" and bench.mean_or_nan([1, 2]) == 1.5


def test_the_margin_bench_judges_each_plan_and_counts_the_kept_tools_right(
    tmp_path: Path,
) -> None:
    from freyr_dspy.testing import FunctionLM, register_fake

    def tool(name: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
        return {"type": "function", "function": {"name": name, "parameters": schema}}

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([tool("search"), tool("reply")]), encoding="utf-8")
    examples = tmp_path / "train.jsonl"
    search = {"name": "search", "arguments": {"q": "x"}}
    rows_in = [
        {"id": "asks-search", "message": "find x", "calls": [search]},
        {"id": "asks-nothing", "message": "hi", "calls": []},
        {"id": "unlabelled", "message": "no calls key"},
    ]  # fmt: skip
    examples.write_text("".join(json.dumps(r) + "\n" for r in rows_in), encoding="utf-8")
    answers = {
        "intent": {"intents": ["search", "reply"]},
        "confirm": {"asked": {"search": True, "reply": False}},
    }
    register_fake("margin", FunctionLM(lambda call: answers[call.role]))
    bench = load_script("bench_margin")
    out = tmp_path / "margin.json"
    argv = ["--model", "fake/margin", "--tools", str(tools), "--examples", str(examples)]
    try:
        assert bench.main([*argv, "--margins", "0,1", "--out", str(out)]) == 0
        rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
        answers["intent"] = {"intents": ["reply"]}  # a rerun resumes: nothing is planned again
        assert bench.main([*argv, "--out", str(out)]) == 0
    finally:
        unregister_fake("margin")
    assert json.loads(out.read_text(encoding="utf-8"))["rows"] == rows
    assert [row["id"] for row in rows] == ["asks-search", "asks-nothing"]  # labelled rows only
    assert rows[0]["tools"] == ["search", "reply"] and rows[0]["written"] == ["search"]
    assert rows[0]["scored"] == {"0.0": None, "1.0": None}  # a fake model cannot score
    assert bench.right(rows[0], ["search"]) and not bench.right(rows[1], ["search"])
    assert bench.right(rows[1], [])  # nothing asked: keeping nothing is right

    one_tool = {"tools": ["reply"], "asked": [], "written": ["reply"], "scored": {"1.0": []}}
    lines = bench.report([*rows, one_tool], (1.0,))
    assert lines[0] == "3 requests, 3 planned a tool (verdicts right / plans)"
    assert "| written | 0 | 1 | 1 |" in lines  # one tool: kept wrongly; several: right once
    assert "| scored, margin 1 | 1 | 0 | 1 |" in lines


@pytest.mark.embedded
def test_bench_decode_times_each_batch_on_a_real_model_and_reports_it_against_single_steps(
    tmp_path: Path,
) -> None:
    bench = load_script("bench_decode")
    out = tmp_path / "decode.json"
    argv = ["--model", "embedded/smollm2-135m", "--batches", "4", "--repeats", "2"]
    assert bench.main([*argv, "--out", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [(r["tokens"], r["logits"]) for r in rows] == [
        (1, "last"),
        (1, "all"),
        (4, "last"),
        (4, "all"),
    ]  # the one-token step is measured even when not asked for: it is the yardstick
    assert all(r["seconds"] > 0 for r in rows)

    fake = [
        {"model": "m", "tokens": 1, "logits": "last", "seconds": 0.02},
        {"model": "m", "tokens": 1, "logits": "all", "seconds": 0.02},
        {"model": "m", "tokens": 4, "logits": "last", "seconds": 0.04},
        {"model": "m", "tokens": 4, "logits": "all", "seconds": 0.08},
    ]
    assert "| 4 | 40.0 | 0.50 | 80.0 | 1.00 |" in bench.report(fake)
