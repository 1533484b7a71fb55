"""``freyr compile`` and ``freyr run --program``, run in-process through ``main([...])``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import freyr_dspy
from freyr_dspy.cli import main
from freyr_dspy.compiling import regression_warning
from freyr_dspy.evaluation import EvalSummary
from freyr_dspy.testing import unregister_fake
from tests.support.compile_fakes import project, skilled_program

Output = tuple[int, str, str]


@pytest.fixture
def freyr(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run ``freyr ARGS`` in a fresh project folder; return (exit code, stdout, stderr)."""
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))

    def run(*args: str) -> Output:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(autouse=True)
def skilled() -> Iterator[None]:
    skilled_program()
    yield
    unregister_fake("skilled")


def test_compile_then_run_the_artifact(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "compile", "--benchmark", "todo", "--model", "fake/skilled", "--out", "compiled/todo.json"
    )
    assert code == 0, err
    # fake/skilled is right only when shown demos: the study ships a pool of them
    assert "candidates on 10 rows" in out and "chose trial" in out and "won" in out
    assert "Bootstrapped" not in out  # an optimizer's chatter goes to stderr
    assert "compile: 0 of 10 rows; baseline trial 0" in err  # progress, on stderr
    assert (tmp_path / "compiled" / "todo.json").is_file()
    code, out, err = freyr(
        "run",
        "--program",
        "compiled/todo.json",
        "--json",
        "-m",
        "Add a task called fixture beta with priority 3.",
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["calls"][0]["tool"] == "add_task"
    assert result["state"]["tasks"] == [{"title": "fixture beta", "priority": 3, "done": False}]


def test_compile_a_strategy_with_switches_records_its_settings(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, _, err = freyr(
        "compile", "--no-search", "--benchmark", "todo", "--strategy", "freyr+replan",
        "--model", "fake/skilled", "--out", "compiled/todo.json",
    )  # fmt: skip
    assert code == 0, err
    program = freyr_dspy.load(tmp_path / "compiled" / "todo.json")
    assert (program.strategy_name, program.strategy.config()) == ("freyr", {"replan": True})


def test_compile_json_is_clean_even_when_optimizers_print(freyr) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "compile",
        "--no-search",
        "--benchmark",
        "todo",
        "--model",
        "fake/skilled",
        "--optimizer",
        "bootstrap_rs",
        "--budget",
        "1",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)  # BootstrapRS prints its progress: it must not reach stdout
    assert data["after"]["accuracy"] > data["before"]["accuracy"]
    assert data["after"]["steps"] == data["n_dev"]
    assert data["optimizer"]["name"] == "bootstrap_rs" and data["optimizer"]["budget"] == 1
    assert data["n_train"] + data["n_dev"] == 10
    assert data["artifact"].endswith("compiled/todo.json")
    assert "Best score so far" in err


def test_run_overrides_one_role_of_an_artifact(freyr) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", "--benchmark", "todo", "--model", "fake/skilled")[0] == 0
    code, out, err = freyr(
        "run",
        "--program",
        "compiled/todo.json",
        "--model",
        "chat=fake/rules",
        "-m",
        "Hey, nice to meet you.",
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["reply"].startswith("Hello!")  # fake/rules' chat reply


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--benchmark", "tood"), 2, "Did you mean 'todo'"),
        (("--benchmark", "todo", "--no-search", "--optimizer", "random"), 2, "random"),
        (("--benchmark", "todo", "--optimizer", "labeled"), 2, "goes with --no-search"),
        (("--benchmark", "todo", "--stages", "demos,tpe"), 2, "unknown compile stage(s) tpe"),
        (("--benchmark", "todo", "--switches", "turbo"), 2, "turbo not switches of freyr"),
        (("--benchmark", "todo", "--budget", "0"), 2, "0"),
        (("--benchmark", "todo", "--model", "planner=fake/skilled"), 2, "unknown role 'planner'"),
        (("--benchmark", "todo", "--demo-omit", "catalog"), 2, "no role of this program has"),
    ],
)
def test_bad_arguments_are_one_line_errors(freyr, args, code: int, message: str) -> None:  # type: ignore[no-untyped-def]
    status, _, err = freyr("compile", *args)
    assert status == code
    assert message in err


def test_corrupt_artifact_is_a_clear_error(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "compiled").mkdir()
    (tmp_path / "compiled" / "broken.json").write_text('{"format": "freyr-art', encoding="utf-8")
    code, out, err = freyr("run", "--program", "compiled/broken.json", "-m", "hi")
    assert code == 1 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: corrupt or truncated artifact")


def test_missing_trainset_names_the_file(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "trainsets" / "todo.jsonl").unlink()
    code, _, err = freyr("compile", "--benchmark", "todo", "--model", "fake/skilled")
    assert code == 2
    assert "todo.jsonl" in err and "cannot read trainset" in err


def test_benchmark_options_are_recorded_and_reapplied(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from freyr_dspy.artifacts import load, read_artifact
    from freyr_dspy.settings import Settings

    code, _, err = freyr(
        "compile",
        "--benchmark",
        "todo",
        "--model",
        "fake/skilled",
        "--option",
        'program={"max_retries": 1}',
        "--option",
        "note=hello",
    )
    assert code == 0, err
    settings = Settings(project_dir=tmp_path)
    meta, _ = read_artifact("todo.json", settings=settings)
    assert meta.eval_extra == {"program": {"max_retries": 1}, "note": "hello"}
    assert load("todo.json", settings=settings).max_retries == 1
    assert freyr("compile", "--benchmark", "todo", "--option", "oops")[0] == 2


def test_compile_can_start_from_an_artifact_and_keep_its_demos(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", "--no-search", "--benchmark", "todo", "--model", "fake/skilled")[0] == 0
    labelled = freyr_dspy.load(tmp_path / "compiled" / "todo.json")
    code, out, err = freyr(
        "compile", "--no-search", "--benchmark", "todo", "--start", "compiled/todo.json",
        "--optimizer", "gepa", "--budget", "20", "--out", "compiled/todo-gepa.json", "--json",
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)
    assert summary["started_from"] == "todo.json (labeled)"
    # it starts where the labelled program ended (no uncompiled score below it)
    assert summary["before"]["accuracy"] == summary["after"]["accuracy"] == 1.0
    stacked = freyr_dspy.load(tmp_path / "compiled" / "todo-gepa.json")
    for (name, before), (_, after) in zip(
        labelled.named_predictors(), stacked.named_predictors(), strict=True
    ):
        assert after.demos == before.demos, name  # gepa rewrites instructions only
        assert after.lm is not None and after.lm.model == "fake/skilled"  # recorded models
    meta, _ = freyr_dspy.artifacts.read_artifact(tmp_path / "compiled" / "todo-gepa.json")
    assert meta.started_from == "todo.json (labeled)" and meta.optimizer.name == "gepa"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--benchmark", "nlt-alex"), "was compiled for 'todo', not 'nlt-alex'"),
        (("--benchmark", "todo", "--strategy", "native"), "leave --strategy, --mode and --option"),
        (("--benchmark", "todo", "--option", "max_retries=1"), "fixes the strategy (freyr)"),
    ],
)
def test_start_refuses_what_contradicts_the_artifact(
    freyr, args: tuple[str, ...], message: str
) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", "--no-search", "--benchmark", "todo", "--model", "fake/skilled")[0] == 0
    code, _, err = freyr("compile", "--no-search", *args, "--start", "compiled/todo.json")
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1


def test_start_keeps_the_recorded_models_a_flag_does_not_name(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from freyr_dspy.artifacts import read_artifact

    assert freyr("compile", "--no-search", "--benchmark", "todo", "--model", "fake/skilled")[0] == 0
    code, _, err = freyr(
        "compile", "--no-search", "--benchmark", "todo", "--start", "compiled/todo.json",
        "--optimizer", "gepa",
        "--budget", "10", "--model", "chat=fake/rules", "--sampling", "intent.temperature=0.5",
        "--out", "compiled/todo-2.json",
    )  # fmt: skip
    assert code == 0, err
    meta, _ = read_artifact(tmp_path / "compiled" / "todo-2.json")
    assert meta.assignment["chat"].model == "fake/rules"
    assert meta.assignment["intent"].model == "fake/skilled"
    assert meta.assignment["intent"].sampling.temperature == 0.5
    assert {meta.assignment[r].model for r in ("confirm", "parameters", "summary")} == {
        "fake/skilled"
    }


def test_start_never_overwrites_its_own_artifact(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert freyr("compile", "--no-search", "--benchmark", "todo", "--model", "fake/skilled")[0] == 0
    before = (tmp_path / "compiled" / "todo.json").read_text(encoding="utf-8")
    code, _, err = freyr(
        "compile", "--no-search", "--benchmark", "todo", "--start", "compiled/todo.json"
    )
    assert code == 2 and "would overwrite --start" in err
    assert (tmp_path / "compiled" / "todo.json").read_text(encoding="utf-8") == before


def test_start_takes_the_mode_the_artifact_was_compiled_in(tmp_path: Path) -> None:
    from freyr_dspy.artifacts import build_meta, save, starting_point
    from freyr_dspy.benchmark import EvalOptions
    from freyr_dspy.benchmarks._todo import TodoBenchmark
    from freyr_dspy.errors import ConfigError

    settings = project(tmp_path)
    program = TodoBenchmark().make_program("freyr", EvalOptions(data_dir=tmp_path))
    meta = build_meta(program, benchmark="todo", eval_mode="iterative", eval_extra={"k": 1})
    save(program, settings.compiled_dir / "iter.json", meta)
    begin = starting_point("iter.json", benchmark="todo", settings=settings)
    assert (begin.options.mode, begin.options.extra) == ("iterative", {"k": 1})
    assert begin.label == "iter.json (uncompiled)"
    assert starting_point("iter.json", benchmark="todo", mode="iterative", settings=settings)
    with pytest.raises(ConfigError, match=r"mode \(iterative\)"):
        starting_point("iter.json", benchmark="todo", mode="bootstrap", settings=settings)


def _dev(accuracy: float) -> EvalSummary:
    return EvalSummary(accuracy=accuracy, tokens=100.0, latency=1.0, steps=10, steps_run=10)


def test_compile_warns_when_the_dev_score_fell() -> None:
    warning = regression_warning(_dev(0.4), _dev(0.2))
    assert warning is not None and "0.200 < 0.400" in warning


@pytest.mark.parametrize("before", [None, 0.2, 0.4])
def test_compile_stays_quiet_unless_the_dev_score_fell(before: float | None) -> None:
    assert regression_warning(None if before is None else _dev(before), _dev(0.4)) is None
