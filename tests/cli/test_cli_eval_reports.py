"""``freyr eval compare | stats | export`` on small ``freyr eval --out`` files built here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import freyr_dspy.cli._eval_reports as eval_reports
from freyr_dspy.cli import cli, main
from freyr_dspy.evaluation import code_version


@pytest.fixture(autouse=True)
def _no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit the outputs name: fixed, so no test asks git."""
    monkeypatch.setattr(eval_reports, "code_version", lambda: "abc1234")


def freyr(*args: str) -> Result:
    from freyr_dspy.cli import _register_commands

    _register_commands()
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def eval_file(
    path: Path, label: str, successes: list[float | None], sampling: str = "seed=0"
) -> Path:
    """An eval --out file of one run; a success of None is a step its episode never reached."""
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


# ------------------------------------------------------------------------------------ compare


def test_contestants_of_separate_eval_files_are_paired_step_by_step(tmp_path: Path) -> None:
    old = eval_file(tmp_path / "old.json", "freyr", [1, 0, 0, 0, 1])
    new = eval_file(tmp_path / "new.json", "freyr+x", [1, 1, 1, 0, 0])
    out = tmp_path / "cmp.json"
    result = freyr("eval", "compare", str(old), str(new), "--out", str(out))
    assert result.exit_code == 0
    assert "freyr+x | 5 | 60.0 | 300 | 10 | 1.0" in result.stdout
    assert "freyr vs freyr+x | 5 | 1 | 2 |" in result.stdout
    summary = json.loads(out.read_text())
    assert summary["files"] == ["old.json", "new.json"] and summary["compared_on"] == "abc1234"
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


def test_files_measured_another_way_are_not_paired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = eval_file(tmp_path / "old.json", "freyr", [1, 0])
    other_seed = eval_file(tmp_path / "new.json", "freyr+x", [1, 1], sampling="seed=1")
    assert main(["eval", "compare", str(old), str(other_seed)]) == 2
    assert "measured with another sampling_specs" in capsys.readouterr().err
    assert main(["eval", "compare", str(old), str(old)]) == 2  # one contestant's steps twice
    assert "['freyr'] in two files" in capsys.readouterr().err


def test_a_step_a_contestant_never_reached_counts_as_failed(tmp_path: Path) -> None:
    stopped = eval_file(tmp_path / "old.json", "freyr", [1, 0, None, None])
    went_on = eval_file(tmp_path / "new.json", "freyr+x", [1, 0, 1, 0])
    out = tmp_path / "cmp.json"
    assert freyr("eval", "compare", str(stopped), str(went_on), "--out", str(out)).exit_code == 0
    summary = json.loads(out.read_text())
    freyr_row = summary["contestants"]["freyr"]
    assert (freyr_row["steps"], freyr_row["reached"], freyr_row["steps_pct"]) == (4, 2, 25.0)
    assert freyr_row["input_tokens_mean"] == 150.0  # tokens of the steps it ran
    [pair] = summary["pairs"]
    assert (pair["pairs"], pair["a_won"], pair["b_won"]) == (4, 0, 1)


# -------------------------------------------------------------------------------------- stats


def _call(errors: list[str], ok: bool, attempts: int = 4) -> dict[str, Any]:
    return {"tool": "create_room", "attempts": attempts, "errors": errors, "outcome": {"ok": ok}}


def test_retry_stats_tell_repaired_calls_from_calls_that_repeated_one_error(
    tmp_path: Path,
) -> None:
    same = ["room_from should be provided"] * 4
    records = [
        {"strategy": "freyr", "calls": [_call([], True), _call(same, False)]},
        {"strategy": "freyr", "calls": [_call(["unknown room 'Attic'"], True)]},
        {"strategy": "freyr+exclude_blamed", "calls": [_call(["a", "b", "c", "d"], False)]},
    ]
    seed_2 = [{"strategy": "freyr+exclude_blamed", "calls": [_call(["a"], False, attempts=1)]}]
    first, second = tmp_path / "s1.json", tmp_path / "s2.json"
    first.write_text(json.dumps({"config": {}, "records": records}))
    second.write_text(json.dumps({"config": {}, "records": seed_2}))
    out = tmp_path / "stats.json"
    result = freyr("eval", "stats", str(first), str(second), "--out", str(out))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].split() == [
        "contestant",
        "calls",
        "failing",
        "repaired",
        "alike",
    ]
    assert result.stdout.splitlines()[2].split() == ["freyr", "3", "2", "1", "1"]
    counts = json.loads(out.read_text())
    assert counts["freyr"] == {"calls": 3, "failing": 2, "repaired": 1, "alike_every_attempt": 1}
    # Different errors on every attempt, or a single attempt, are not "alike on every attempt";
    # the label's rows of both files add up.
    assert counts["freyr+exclude_blamed"] == {
        "calls": 2,
        "failing": 2,
        "repaired": 0,
        "alike_every_attempt": 0,
    }


def test_retry_stats_refuse_a_file_without_records_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["eval", "stats", str(broken)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {broken}:1: not a freyr eval --out file")
    no_records = tmp_path / "summary.json"
    no_records.write_text(json.dumps({"config": {}}))
    assert main(["eval", "stats", str(no_records)]) == 2
    assert "not a freyr eval --out file with records" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- export


def test_exported_results_keep_the_tables_not_the_steps_or_paths(tmp_path: Path) -> None:
    report = {
        "config": {"benchmarks": ["b"], "data_dir": "/somewhere/data", "runs": 1, "jobs": 2},
        "benchmarks": {"b": {"cases": {"all": {"freyr": {}}}, "steps": [{"step": "T1.1"}]}},
        "records": [
            {"strategy": "freyr", "run": 0, "episode": "e1"},
            {"strategy": "freyr", "run": 0, "episode": "e1"},
        ],
    }
    source, out = tmp_path / "run.json", tmp_path / "results" / "run.json"
    source.write_text(json.dumps(report))
    result = freyr("eval", "export", str(source), str(out), "--command", "freyr eval -b b")
    assert result.exit_code == 0
    assert result.stderr == f"wrote {out}: 2 step records summarised\n"
    summary = json.loads(out.read_text())
    assert summary["benchmarks"] == {"b": {"cases": {"all": {"freyr": {}}}}}
    assert summary["config"] == {"benchmarks": ["b"], "runs": 1}
    assert (summary["steps_recorded"], summary["units_recorded"]) == (2, 1)
    assert (summary["command"], summary["code"]) == ("freyr eval -b b", "abc1234")


def test_export_needs_the_command_that_produced_the_report(tmp_path: Path) -> None:
    source = eval_file(tmp_path / "run.json", "freyr", [1])
    result = CliRunner().invoke(cli, ["eval", "export", str(source), str(tmp_path / "o.json")])
    assert result.exit_code == 2 and "--command" in result.output


# --------------------------------------------------------------------------------- provenance


def test_code_is_unknown_where_git_cannot_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    def no_git(*args: Any, **kwargs: Any) -> None:
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert code_version() == "unknown"


def test_eval_help_shows_the_evaluation_options_and_the_commands() -> None:
    result = freyr("eval", "--help")
    assert result.exit_code == 0
    assert "--benchmark" in result.stdout and "--report-only" in result.stdout
    commands = result.stdout.split("Commands:")[1].split()
    assert {"compare", "stats", "export"} <= set(commands)
