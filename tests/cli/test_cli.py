"""The ``freyr`` command line, run in-process through ``main([...])``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from freyr_dspy.cli import main
from freyr_dspy.testing import ScriptedLM, register_fake, unregister_fake
from tests.support.presets import SMALL_PRESET

Output = tuple[int, str, str]


@pytest.fixture
def freyr(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``freyr ARGS`` and return (exit code, stdout, stderr)."""

    def run(*args: str) -> Output:
        code = main(list(args))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture
def intent_fake() -> Iterator[ScriptedLM]:
    engine = ScriptedLM({"intent": {"*": {"intents": ["list_tasks"]}}})
    register_fake("cli_intent", engine)
    yield engine
    unregister_fake("cli_intent")


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    return lines[0]


def test_models_lists_the_embedded_models(freyr) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = freyr("models")
    assert code == 0
    for model_id in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"):
        assert f"embedded/{model_id}" in out
    assert "Apache-2.0 (Qwen)" in out and "1117 MB" in out
    assert "gemma" not in out  # a base model without a chat template: dropped
    assert "ollama_chat/qwen2.5:7b" in out and "gguf:" in out
    code, out, _ = freyr("models", "--json")
    data = json.loads(out)
    rows = {m["id"]: m for m in data["embedded"]}
    assert rows["embedded/smollm2-135m"]["installed"] is True
    assert rows["embedded/qwen2.5-coder-1.5b"]["role"] == "default"
    assert rows["embedded/qwen2.5-coder-0.5b"]["role"] == "fast"
    assert rows["embedded/qwen2.5-coder-1.5b"]["license"] == "Apache-2.0 (Qwen)"
    assert data["examples"] and data["cache"]


def test_run_json_has_reply_calls_state_usage(freyr) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "run", "-m", "Add a task called buy milk", "--model", "fake/rules", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert {"reply", "calls", "state", "usage"} <= set(data)
    assert data["calls"][0]["tool"] == "add_task"
    assert data["calls"][0]["outcome"]["ok"] is True
    assert data["state"] == {"tasks": [{"title": "buy milk", "priority": 1, "done": False}]}
    assert set(data["usage"]) == {"intent", "parameters", "summary"}
    assert data["usage"]["intent"]["lm_calls"] == 1


def test_run_takes_a_strategy_with_switches(freyr) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "run", "-m", "Add a task called buy milk", "--model", "fake/rules",
        "--strategy", "freyr+replan", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["calls"][0]["tool"] == "add_task"


def test_run_without_a_strategy_runs_the_models_preset() -> None:
    from freyr_dspy.cli._run import make_program
    from freyr_dspy.program import main_model

    def built(*model_specs: str, strategy: str | None = None) -> dict[str, object]:
        program = make_program(
            domain=None, strategy=strategy, max_retries=3, state_view=None, program_path=None,
            model_specs=model_specs, sampling_specs=(), api_base=None,
        )  # fmt: skip
        return program.strategy.config()

    small = "embedded/qwen2.5-coder-0.5b"  # built, not loaded: nothing runs
    assert built(small) == SMALL_PRESET
    assert built(small, strategy="freyr") == {}  # named: taken as written
    assert built("fake/rules") == {}
    assert main_model(("intent=fake/x", small), "fake/rules") == small
    assert main_model(("intent=fake/x",), "fake/rules") == "fake/rules"


def test_run_text_output_puts_data_on_stdout_and_details_on_stderr(freyr) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr("run", "-m", "Add a task called tea", "--model", "fake/rules")
    assert code == 0
    assert out.startswith("Done.")
    assert "[ok] add_task({'title': 'tea'}) x1" in err
    assert "intent" in err and "calls=1" in err


def test_model_per_role_and_sampling_per_role(freyr, intent_fake: ScriptedLM) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr(
        "run",
        "-m",
        "show everything",
        "--model",
        "fake/rules",
        "--model",
        "intent=fake/cli_intent",
        "--sampling",
        "intent.temperature=0.8",
        "--sampling",
        "top_p=0.6",
        "--json",
    )
    assert code == 0, err
    assert intent_fake.roles_called() == ["intent"]
    config = intent_fake.calls[0].config
    assert (config.temperature, config.top_p) == (0.8, 0.6)
    assert json.loads(out)["calls"][0]["tool"] == "list_tasks"


def test_state_file_is_read_and_not_written(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "state.json"
    state.write_text('{"tasks": [{"title": "tea"}]}', encoding="utf-8")
    code, out, _ = freyr(
        "run",
        "-m",
        "Complete the task called tea",
        "--model",
        "fake/rules",
        "--state",
        str(state),
        "--json",
    )
    assert code == 0
    assert json.loads(out)["state"]["tasks"][0]["done"] is True
    assert json.loads(state.read_text(encoding="utf-8")) == {"tasks": [{"title": "tea"}]}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--model", "intnet=fake/rules"), "unknown role 'intnet'"),
        (("--model", "intent=fake/nope"), "unknown model id 'fake/nope'"),
        (("--model", "embedded/smollm"), "Did you mean 'embedded/smollm2-135m'"),
        (("--model", "fake/rules", "--sampling", "intent.temp=1"), "bad sampling for role"),
        (("--model", "fake/rules", "--sampling", "temperature"), "bad sampling spec"),
        (("--model", "fake/rules", "--domain", "tod"), "Did you mean 'todo'"),
        (("--model", "fake/rules", "--strategy", "frey"), "Did you mean 'freyr'"),
        (("--model", "fake/rules", "--strategy", "freyr+replna"), "takes no setting 'replna'"),
        (("--model", "fake/rules", "--state-view", "html"), "unknown state view 'html'"),
    ],
)
def test_bad_input_is_exit_2_with_one_line(freyr, args: tuple[str, ...], expected: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = freyr("run", "-m", "hi", *args)
    assert code == 2
    assert out == ""
    assert expected in one_line_error(err)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"tasks": [', "state.json:1: invalid JSON"),
        ('{"tasks": "x"}', "state.json: not a valid todo state"),
        (None, "state.json: cannot read"),
    ],
)
def test_bad_state_file(freyr, tmp_path: Path, content: str | None, expected: str) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "state.json"
    if content is not None:
        state.write_text(content, encoding="utf-8")
    code, _, err = freyr("run", "-m", "hi", "--model", "fake/rules", "--state", str(state))
    assert code == 2
    assert expected in one_line_error(err)


def test_debug_shows_the_traceback(freyr) -> None:  # type: ignore[no-untyped-def]
    code, _, err = freyr("--debug", "run", "-m", "hi", "--model", "fake/nope")
    assert code == 2
    assert "Traceback (most recent call last)" in err
    assert "UnknownModelError" in err
    assert err.rstrip().splitlines()[-1].startswith("error: unknown model id")


def test_usage_errors_come_from_click(freyr) -> None:  # type: ignore[no-untyped-def]
    code, _, err = freyr("run")
    assert code == 2
    assert "Missing option '--message'" in err


def test_signatures_dump_writes_one_file_per_role(freyr, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = freyr("signatures", "dump", "--out", str(tmp_path))
    assert code == 0
    written = {Path(line).name for line in out.splitlines()}
    assert {"intent.json", "parameters.json", "summary.json", "chat.json"} <= written
    dumped = json.loads((tmp_path / "intent.json").read_text(encoding="utf-8"))
    assert dumped["signature"] == "IntentSignature"
