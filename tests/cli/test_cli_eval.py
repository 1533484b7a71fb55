"""``freyr eval`` end to end with ``fake/rules`` on the tiny benchmark."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

import freyr_dspy.benchmarks as benchmarks_module
from freyr_dspy.cli import main
from freyr_dspy.cli._common import ProgressLines
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.testing import unregister_fake
from tests.support.tiny_benchmark import NAME, CountingRules, TinyBenchmark, install, install_fake


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> TinyBenchmark:
    # NOTE: only the tiny benchmark: the real ones are tested by their own suites.
    monkeypatch.setattr(benchmarks_module.BENCHMARKS, "modules", ())
    return install(monkeypatch)


def eval_args(tmp_path: Path, *more: str) -> list[str]:
    return [
        "eval",
        "--benchmark",
        NAME,
        "--strategy",
        "freyr,lazy",
        "--model",
        "fake/rules",
        "--data",
        str(tmp_path),
        *more,
    ]


def test_eval_prints_the_table(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(eval_args(tmp_path, "--runs", "2")) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{NAME} - bootstrap mode, 2 run(s)")
    assert "freyr     100.0 ± 0.0" in out and "lazy        0.0 ± 0.0" in out
    assert "model fake/rules; temperature=0.8 top_p=0.6" in out  # paper sampling by default


def test_eval_reports_a_switched_strategy_under_its_label(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = eval_args(tmp_path, "--strategy", "freyr,freyr+calibrate", "--limit", "2")
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    # a fake model cannot score names, so the calibrated variant keeps freyr's plans and score
    assert rows[4][:3] == ["add", "freyr", "100.0"] and rows[5][0] == "freyr+calibrate"
    assert rows[5][1:4] == rows[4][2:5]  # the same score, input and output tokens
    assert "freyr vs freyr+calibrate" in out
    assert main(eval_args(tmp_path, "--strategy", "freyr+confrm")) == 2
    assert "takes no setting 'confrm'" in capsys.readouterr().err


def test_eval_json_out_and_resume(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    args = eval_args(
        tmp_path,
        "--runs",
        "2",
        "--out",
        str(out),
        "--json",
        "--jobs",
        "2",
        "--sampling",
        "temperature=0.2",
    )
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert printed == saved
    assert saved["config"]["sampling_specs"] == ["temperature=0.8", "top_p=0.6", "temperature=0.2"]
    assert saved["config"]["resumed_units"] == 0 and len(saved["records"]) == 16
    checkpoint = tmp_path / "results.json.checkpoint.jsonl"
    assert len(checkpoint.read_text().splitlines()) == 1 + 16
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["config"]["resumed_units"] == 16
    assert again["benchmarks"] == saved["benchmarks"]


def test_programs_are_repeatable_or_comma_separated(
    tiny: TinyBenchmark,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def load(path: Path, *, settings: Any = None, toolbox: Any = None) -> FreyrProgram:
        program = FreyrProgram("todo", strategy="freyr")
        program.apply_assignment({r: RoleModel(model="fake/rules") for r in program.role_names})
        return program

    monkeypatch.setattr("freyr_dspy.evaluation._plan.load", load)
    args = eval_args(tmp_path, "--program", "a.json, b.json", "--program", "c.json", "--json")
    assert main(args) == 0
    strategies = {r["strategy"] for r in json.loads(capsys.readouterr().out)["records"]}
    assert strategies == {"freyr", "lazy", "a", "b", "c"}


def test_report_only_reads_a_partial_checkpoint_and_runs_nothing(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    assert main(eval_args(tmp_path, "--runs", "1", "--out", str(out))) == 0
    checkpoint = tmp_path / "results.json.checkpoint.jsonl"
    lines = checkpoint.read_text().splitlines(keepends=True)
    # two finished units, and a third still being written by a running evaluation
    partial = "".join(lines[:3]) + lines[3][: len(lines[3]) // 2]
    checkpoint.write_text(partial)
    out.unlink()
    capsys.readouterr()
    args = eval_args(tmp_path, "--runs", "2", "--out", str(out), "--json", "--report-only")
    assert main(args) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "partial report: 2 of 16 units finished" in captured.err
    assert report["config"]["units"] == 2 and report["config"]["planned_units"] == 16
    assert len(report["records"]) == 2
    assert checkpoint.read_text() == partial  # read only: the half-written line is left alone
    assert not out.exists()
    code = main([*eval_args(tmp_path, "--report-only")])
    assert code == 2 and "pass --out" in capsys.readouterr().err


def test_report_only_of_a_finished_checkpoint_says_it_is_complete(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    assert main(eval_args(tmp_path, "--runs", "1", "--out", str(out))) == 0
    capsys.readouterr()
    assert main(eval_args(tmp_path, "--runs", "1", "--out", str(out), "--report-only")) == 0
    err = capsys.readouterr().err
    assert "complete report: 8 of 8 units finished" in err and "partial" not in err


def test_eval_config_mismatch_and_restart(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "r.json")
    assert main(eval_args(tmp_path, "--out", out, "--limit", "1")) == 0
    capsys.readouterr()
    assert main(eval_args(tmp_path, "--out", out, "--limit", "1", "--mode", "iterative")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: checkpoint") and "--restart" in err and err.count("\n") == 1
    assert main(eval_args(tmp_path, "--out", out, "--mode", "iterative", "--restart")) == 0


def test_eval_passes_benchmark_options(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = []
    original = tiny.episodes

    def spy(options):  # type: ignore[no-untyped-def]
        seen.append(options)
        return original(options)

    tiny.episodes = spy  # type: ignore[method-assign]
    args = eval_args(
        tmp_path,
        "--limit",
        "1",
        "--domains",
        "bank, hr",
        "--difficulty",
        "easy",
        "--prompt",
        "paper",
        "--inner",
        "nlt",
        "--state-view",
        "text",
    )
    assert main(args) == 0
    options = seen[0]
    assert options.limit == 1 and options.data_dir == tmp_path
    assert options.extra == {
        "domains": ["bank", "hr"],
        "difficulty": ["easy"],
        "prompt": "paper",
        "inner": "nlt",
        "state_view": "text",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--benchmark", "nope"], "unknown benchmark 'nope'"),
        (["--benchmark", NAME, "--strategy", "freyrr"], "Did you mean 'freyr'"),
        (
            ["--benchmark", NAME, "--model", "fake/rules", "--model", "intnet=fake/rules"],
            "unknown role 'intnet'",
        ),
    ],
)
def test_eval_errors_exit_2_with_one_line(
    tiny: TinyBenchmark,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    assert main(["eval", "--data", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_eval_missing_data_dir(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--benchmark", NAME, "--data", str(tmp_path / "missing")]) == 2
    assert "pass --data DIR or set FREYR_DATA_DIR" in capsys.readouterr().err


def test_progress_bar_only_on_a_terminal(
    tiny: TinyBenchmark,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(eval_args(tmp_path, "--limit", "1")) == 0
    err = capsys.readouterr().err  # no terminal: plain lines, no bar
    assert "eval: 0 of 2 units\neval: 2 of 2 units, done in" in err and "100%" not in err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(eval_args(tmp_path, "--limit", "1")) == 0
    err = capsys.readouterr().err
    assert "eval: 100%" in err and "2/2" in err


class TermAfter(CountingRules):
    """Answers like fake/rules; sends this process SIGTERM once, on its 7th call."""

    sent = False

    def __call__(self, call: Any) -> Any:
        if len(self.calls) == 6 and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here, in this thread
        return super().__call__(call)


def test_sigterm_stops_eval_like_ctrl_c_and_keeps_the_finished_units(
    tiny: TinyBenchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install_fake("term-after", TermAfter())
    out = tmp_path / "run.json"
    args = [*eval_args(tmp_path, "--jobs", "1", "--out", str(out))]
    args[args.index("fake/rules")] = "fake/term-after"
    try:
        assert main(args) == 143
        assert "Terminated." in capsys.readouterr().err
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored after the command
        kept = out.with_name(out.name + ".checkpoint.jsonl").read_text().splitlines()
        # a header, then the units finished before the 7th call (freyr: 3 calls, lazy: 1)
        assert 1 < len(kept) < 1 + 4
        assert main(args) == 0  # the resume runs the rest
        saved = json.loads(out.read_text())
        assert saved["config"]["resumed_units"] == len(kept) - 1 and len(saved["records"]) == 8
    finally:
        unregister_fake("term-after")


def test_progress_lines_for_a_log_file_say_how_far_and_how_long_is_left() -> None:
    lines: list[str] = []
    now = [1000.0]
    progress = ProgressLines("eval", "unit", every=300, clock=lambda: now[0], write=lines.append)
    progress(50, 750)  # resumed: 50 units were done by an earlier process
    now[0] += 100
    progress(51, 750)  # too soon for another line
    now[0] += 500
    progress(60, 750)  # 10 units in 600 s -> 690 left at 60 s each
    now[0] += 60
    progress(750, 750)  # the last line always comes
    assert lines == [
        "eval: 50 of 750 units",
        "eval: 60 of 750 units, 10 min in this run, ~11 h 30 min left",
        "eval: 750 of 750 units, done in 11 min",
    ]


def test_progress_lines_start_a_new_pass_when_the_count_goes_down() -> None:
    lines: list[str] = []
    now = [0.0]
    progress = ProgressLines("dev", "step", every=300, clock=lambda: now[0], write=lines.append)
    progress(0, 10)
    now[0] = 40.0
    progress(10, 10)  # compile's dev score before...
    progress(0, 10)  # ...and after: a new pass, timed from here
    now[0] = 70.0
    progress(10, 10)
    assert lines == [
        "dev: 0 of 10 steps",
        "dev: 10 of 10 steps, done in 40 s",
        "dev: 0 of 10 steps",
        "dev: 10 of 10 steps, done in 30 s",
    ]
