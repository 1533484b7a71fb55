"""The user's-tools path on the real fast model (Qwen2.5-Coder-0.5B, in-process, greedy).

Compile a plain tool-use program on a few examples, then evaluate the artifact beside the
uncompiled strategy on other messages: the mechanics a user relies on, with a real model's
output going through the exact-call check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.backends import is_installed
from freyr_dspy.cli import main
from freyr_dspy.settings import FAST_MODEL
from tests.support.dataset_helpers import WEATHER_TOOLS, write_rows

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        not is_installed(FAST_MODEL), reason="the Qwen 0.5B parts are not installed"
    ),
]

GREEDY = ("--sampling", "temperature=0", "--sampling", "seed=0")


def test_compile_and_eval_on_the_fast_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    (tmp_path / "tools.json").write_text(json.dumps(WEATHER_TOOLS), encoding="utf-8")
    weather = [("Oslo", 1), ("Lima", 3), ("Cairo", 2), ("Quito", 1)]
    write_rows(
        tmp_path / "train.jsonl",
        [
            {
                "message": f"What's the weather in {city} for the next {days} days?",
                "calls": [{"name": "get-weather", "arguments": {"city": city, "days": days}}],
            }
            for city, days in weather
        ]
        + [{"message": "Thanks, that's all!", "calls": []}],
    )
    write_rows(
        tmp_path / "test.jsonl",
        [
            {
                "id": "rome",
                "message": "What's the weather in Rome?",
                "calls": [{"name": "get-weather", "arguments": {"city": "Rome"}}],
            },
            {"id": "chat", "message": "Hello! How are you today?", "calls": []},
        ],
    )
    data = ("--tools", "tools.json", "--model", FAST_MODEL, *GREEDY)
    compile_ = ["compile", *data, "--examples", "train.jsonl", "--test", "test.jsonl"]
    assert main([*compile_, "--max-demos", "2"]) == 0
    out = capsys.readouterr().out
    # the preset on five rows, then what its failures call for (a demo pool at least), each
    # scored as shipped; with five rows no gain can pass the guard, so the preset ships
    assert "candidates on 5 rows" in out and "demos" in out
    assert "kept the baseline" in out and "held-out rows:" in out
    compiled = tmp_path / "compiled" / "train.json"
    meta = json.loads(compiled.read_text(encoding="utf-8"))["meta"]
    trials = meta["search"]["trials"]
    assert meta["toolbox"] and len(trials) >= 2 and trials[0]["stage"] == "baseline"
    lines = (tmp_path / meta["search"]["records"]).read_text(encoding="utf-8").splitlines()
    written = [json.loads(line) for line in lines]
    for trial in trials:  # every row a candidate reports was scored by it, and written down
        assert sum(1 for r in written if r.get("trial") == trial["number"]) == trial["rows"]
    code = main(
        [
            "eval",
            *data,
            "--examples",
            "test.jsonl",
            "--strategy",
            "freyr",
            "--program",
            "compiled/train.json",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    records = json.loads(captured.out)["records"]
    by_step = {(r["strategy"], r["step"]): r for r in records}
    assert set(by_step) == {(s, i) for s in ("freyr", "train") for i in ("rome", "chat")}
    for record in records:  # every call went through the tools' validation
        assert all(call["outcome"]["ok"] for call in record["calls"]), record
        assert record["input_tokens"] > 0 and record["seconds"] > 0
    rome = by_step[("freyr", "rome")]
    assert rome["success"] == 1.0, rome["diagnostics"]
