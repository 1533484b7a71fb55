"""The bench scripts run: a script that only runs on a long model job must not rot unseen."""

from __future__ import annotations

import json
import re
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
    every = {e.case for e in suite.episodes(bench.EvalOptions(data_dir=tmp_path))}
    assert len(episodes) == len({e.case for e in episodes}) == len(every)  # one per category

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
    assert [path.name for path in out.parent.iterdir()] == ["rows.json"]  # no temp file left
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


def test_the_tools_bench_scores_each_request_of_the_suite_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from freyr_dspy.testing import FakeCall, FunctionLM, register_fake

    bench = load_script("bench_tools")
    _, requests = bench.load_suite()
    by_message = {request["message"]: request for request in requests}
    attempts: dict[str, int] = {}

    def answer(call: FakeCall) -> dict[str, Any]:
        """Right, except: geometry-2 is not planned, geometry-10's tool is planned once of the
        two times asked, geometry-3 is refused once (a width of -1), daily-1 copies the
        description's example city."""
        request = by_message[call.inputs["message"]]
        expected, case = request["expected"], request["id"]
        if call.role == "intent":
            names = [c["name"] for c in expected][: 1 if case == "geometry-10" else None]
            return {"intents": [] if case == "geometry-2" else names or ["conversation"]}
        if call.role == "confirm":  # a plan of two tools is checked: both asked for
            return {"asked": {c["name"]: True for c in expected}}
        if call.role != "parameters":
            return {"reply": "Done."}
        if case == "daily-1":  # the example city, and an optional value nobody stated
            return {"arguments": {"city": "Lisbon", "units": "imperial"}}
        tool = re.match(r"- ([\w.-]+)", call.inputs["tool"])
        arguments = next(c["arguments"] for c in expected if tool and c["name"] == tool[1])
        attempts[case] = attempts.get(case, 0) + 1
        if case == "geometry-3" and attempts[case] == 1:
            return {"arguments": {**arguments, "width": -1}}
        return {"arguments": arguments}

    engine = FunctionLM(answer)
    register_fake("suite", engine)
    out = tmp_path / "tools.json"
    argv = ["--models", "fake/suite", "--strategies", "freyr", "--limit", "16", "--out", str(out)]
    try:
        assert bench.main(argv) == 0
        calls = len(engine.calls)
        assert bench.main(argv) == 0  # a rerun resumes: every row is there, nothing is asked
        assert len(engine.calls) == calls
    finally:
        unregister_fake("suite")
    rows = {row["id"]: row for row in json.loads(out.read_text(encoding="utf-8"))["rows"]}
    assert list(rows) == [request["id"] for request in requests[:16]]
    wrong = {"geometry-2", "geometry-10", "daily-1"}
    assert {case for case, row in rows.items() if not row["ok"]} == wrong
    assert rows["geometry-1"]["made"] == [{"name": "math.hypot", "arguments": {"a": 6, "b": 8}}]
    assert rows["geometry-3"]["rejected_attempts"] == 1 and rows["geometry-3"]["ok"]
    copied = rows["daily-1"]  # refused once as a copy, then made as asked; units dropped
    assert copied["made"] == [{"name": "get-weather", "arguments": {"city": "Lisbon"}}]
    assert (copied["copied_examples"], copied["dropped_optional"]) == (1, 1)
    assert {row["kind"] for row in rows.values()} == {"0-tool", "1-tool", "2-tool"}
    # 13 of 16 exact; one-tool 8/10, two-tool 2/3, no-tool 3/3; 2 refused, 1 copy, 1 dropped
    assert "| freyr | 16 | 0.81 | 0.80 | 0.67 | 1.00 | 0 | 2 | 1 | 1 |" in capsys.readouterr().out
    assert bench.main([*argv, "--report-only"]) == 0
    assert "| freyr | 16 | 0.81 | 0.80 | 0.67 | 1.00 | 0 | 2 | 1 | 1 |" in capsys.readouterr().out


def test_the_models_bench_measures_the_intent_role_alone_on_its_set() -> None:
    from freyr_dspy.testing import FakeCall, FunctionLM, register_fake

    bench = load_script("bench_models")
    data = json.loads(bench.INTENT_SET.read_text(encoding="utf-8"))
    expected = {request["message"]: request["expected"] for request in data["requests"]}

    def answer(call: FakeCall) -> dict[str, Any]:
        """Right for requests of at most one tool; of two, only the first."""
        return {"intents": expected[call.inputs["message"]][:1] or ["conversation"]}

    engine = FunctionLM(answer)
    register_fake("probe", engine)
    try:
        measured = bench.measure_intents("fake/probe")
    finally:
        unregister_fake("probe")
    assert {call.role for call in engine.calls} == {"intent"}  # the plan only: nothing after it
    assert len(engine.calls) == len(data["requests"])
    kinds = [f"{len(request['expected'])}-tool" for request in data["requests"]]
    assert measured["intent_by_kind"] == {"0-tool": 1.0, "1-tool": 1.0, "2-tool": 0.0}
    right = kinds.count("0-tool") + kinds.count("1-tool")
    assert measured["intent_accuracy"] == round(right / len(kinds), 3)
    assert [row["ok"] for row in measured["intent_rows"]] == [k != "2-tool" for k in kinds]
    speed = {"load_s": 1.5, "prompt_tok_s": 300.0, "generation_tok_s": 40.0, "peak_rss_gb": 1.2}
    line = bench.table([{"model": "m", **speed, **measured}]).splitlines()[-1]
    accuracy = f"{measured['intent_accuracy']:.2f}"
    assert line == f"| m | 1.5 | 300.0 | 40.0 | 1.2 | {accuracy} | 1.00/1.00/0.00 | - | - | - |"


def test_the_callnavi_bench_reports_catalog_sizes_and_scores_per_domain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from freyr_dspy.testing import FakeCall, FunctionLM, register_fake
    from tests.support.paths import DATA_DIR

    bench = load_script("bench_callnavi")

    def answer(call: FakeCall) -> dict[str, Any]:
        """The right call for owner OW-1's question; the opening hours for any other."""
        if "OW-1" in call.inputs["question"]:
            return {"API": ["getPetList"], "parameters": [{"ownerID": "OW-1"}]}
        return {"API": ["getOpeningHours"], "parameters": [{}]}

    engine = FunctionLM(answer)
    register_fake("callnavi-bench", engine)
    out = tmp_path / "callnavi.json"
    argv = ["--data", str(DATA_DIR), "--domains", "pets", "--strategies", "single"]
    argv += ["--limit", "2", "--model", "fake/callnavi-bench", "--out", str(out)]
    try:
        assert bench.main(argv) == 0
        assert len(engine.calls) == 2  # one LM call per question
        assert bench.main(argv) == 0  # resumed from the checkpoint: nothing asked again
        assert len(engine.calls) == 2
    finally:
        unregister_fake("callnavi-bench")
    report = json.loads(out.read_text(encoding="utf-8"))
    apis = json.loads((DATA_DIR / "callnavi" / "pets.apis.json").read_text(encoding="utf-8"))
    names = [api["name"] for api in next(iter(apis.values()))]
    catalog = report["catalogs"]["pets"]
    assert catalog["apis"] == len(names)
    assert catalog["names_chars"] == len("\n".join(f"- {name}" for name in names))
    assert catalog["full_tokens"] is None  # a fake has no tokenizer: chars / 4 are shown
    [row] = report["rows"]
    # the easy question (pet01) right, the medium one (pet04) routed wrong
    assert [(r["episode"], r["success"]) for r in report["records"]] == [("pet01", 1), ("pet04", 0)]
    assert (row["questions"], row["lm_calls"], row["routing"], row["ast"]) == (2, 1.0, 0.5, 0.5)
    assert row["failure_kinds"] == {"routing": 1} and row["context_overflows"] == 0
    sizes = "/".join(str(catalog[f"{level}_chars"] // 4) for level in ("full", "brief", "names"))
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| pets"))
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[:4] == ["pets", str(len(names)), sizes, "single"]
    assert cells[6] == "1.0" and cells[8:] == ["0.50", "0.50", "0.50", "0/2"]  # LM calls, scores


def test_the_compile_bench_runs_freyr_compile_per_job_and_reports_the_held_out_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.dataset_helpers import WEATHER_TOOLS, write_rows

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "tools.json").write_text(json.dumps(WEATHER_TOOLS), encoding="utf-8")
    cities = ["Oslo", "Lima", "Rome", "Pune", "Kyiv", "Bern"]
    rows = [
        {"id": f"w{i}", "category": "weather", "message": f"get weather city={c}",
         "calls": [{"name": "get-weather", "arguments": {"city": c}}]}
        for i, c in enumerate(cities)
    ]  # fmt: skip
    write_rows(suite / "train.jsonl", rows[:4])
    write_rows(suite / "test.jsonl", [*rows[4:], {"id": "hi", "message": "hello", "calls": []}])
    bench = load_script("bench_compile")
    out = tmp_path / "runs" / "compile_same.json"
    args = ["same", "--model", "fake/rules", "--suite", str(suite), "--out", str(out)]
    assert bench.main(args) == 0
    printed = capsys.readouterr().out
    [row] = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert row["job"] == "same-s0" and row["train_rows"] == 4
    assert {r["row"] for r in row["held_rows"]} == {"w4", "w5", "hi"}
    assert all({"before", "after"} <= set(r) for r in row["held_rows"])
    assert "pooled held-out:" in printed and "| same-s0 |" in printed
    assert bench.main(args) == 0  # a finished job is not run again
    assert len(json.loads(out.read_text(encoding="utf-8"))["rows"]) == 1
    spread_out = tmp_path / "runs" / "compile_spread.json"
    assert bench.main([*args[:-1], str(spread_out), "--test-limit", "2"]) == 0
    [row] = json.loads(spread_out.read_text(encoding="utf-8"))["rows"]
    assert {r["row"] for r in row["held_rows"]} == {"w4", "w5"}  # rows 0 and 3 // 2 of 3


def test_the_conversations_bench_holds_each_conversation_and_counts_whole_ones_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = Path(__file__).resolve().parents[2] / "trainsets" / "conversations"
    monkeypatch.chdir(tmp_path)
    bench = load_script("bench_conversations")
    out = tmp_path / "conversations.json"
    args = [
        "--model", "fake/rules", "--contestants", "python:freyr",
        "--examples", str(suite / "test.jsonl"), "--limit", "2", "--out", str(out),
    ]  # fmt: skip
    assert bench.main(args) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [r["conversation"] for r in rows] == ["notes-9", "calendar-9"]  # spread over the file
    assert all(len(r["turns"]) >= 2 and r["tokens"] > 0 for r in rows)
    printed = capsys.readouterr().out
    assert "| python:freyr | 2 |" in printed and "fully right" in printed
