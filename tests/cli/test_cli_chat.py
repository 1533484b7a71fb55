"""``freyr chat``: turns read from stdin; the state and the conversation carry over."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from freyr_dspy.cli import main
from freyr_dspy.cli._chat import ChatSession
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake


def chat(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lines: str, *args: str
) -> tuple[int, list[str], str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code = main(["chat", "--model", "fake/rules", *args])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_state_carries_over_between_turns_and_is_saved(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = tmp_path / "state.json"
    lines = "Add a task called milk\n\nAdd a task called tea\n/state\n/quit\nAdd a task called x\n"
    code, out, err = chat(capsys, monkeypatch, lines, "--json", "--save-state", str(saved))
    assert code == 0, err
    first, second, state = (json.loads(line) for line in out)  # one JSON document per line
    assert [t["title"] for t in first["state"]["tasks"]] == ["milk"]
    assert [t["title"] for t in second["state"]["tasks"]] == ["milk", "tea"]
    assert state == second["state"]  # /state shows the latest; nothing ran after /quit
    assert json.loads(saved.read_text(encoding="utf-8")) == state


def test_reset_goes_back_to_the_starting_state(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    start = tmp_path / "start.json"
    start.write_text(json.dumps({"tasks": [{"title": "bread"}]}), encoding="utf-8")
    lines = "Add a task called milk\n/reset\n/state\n"
    code, out, err = chat(capsys, monkeypatch, lines, "--json", "--state", str(start))
    assert code == 0, err
    assert [t["title"] for t in json.loads(out[0])["state"]["tasks"]] == ["bread", "milk"]
    assert [t["title"] for t in json.loads(out[1])["tasks"]] == ["bread"]
    assert "reset" in err


def test_text_mode_prints_the_reply_and_the_calls(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = chat(capsys, monkeypatch, "Add a task called tea\n")
    assert code == 0
    assert len(out) == 1 and out[0].startswith("Done.")
    assert "[ok] add_task({'title': 'tea'}) x1" in err


def test_each_turn_sees_the_earlier_turns() -> None:
    seen: list[str] = []

    def answer(call: FakeCall) -> dict[str, object]:
        if call.role == "intent":
            seen.append(call.inputs["conversation"])
            return {"intents": ["conversation"]}
        return {"reply": f"echo {call.inputs['message']}"}

    register_fake("chat_session", FunctionLM(answer))
    try:
        program = FreyrProgram("todo").apply_assignment(
            dict.fromkeys(
                ("intent", "parameters", "summary", "chat"), RoleModel(model="fake/chat_session")
            )
        )
        session = ChatSession(program)
        session.send("hello")
        session.send("again")
    finally:
        unregister_fake("chat_session")
    assert seen[0] == "(none)"
    assert seen[1] == "user: hello\nassistant: echo hello"
    assert session.turns[-1] == {"role": "assistant", "content": "echo again"}


# ~140 s on 2 cores (grammar-constrained decoding on a 49k vocabulary): outside the default run.
@pytest.mark.slow
@pytest.mark.embedded
def test_two_turns_on_the_embedded_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Add a task called milk\nWhat is on my list?\n"))
    sampling = ["--sampling", "max_tokens=48", "--sampling", "temperature=0"]
    fast = ["--model", "embedded/smollm2-135m"]  # the session mechanics, not the model's skill
    code = main(["chat", "--json", "--max-retries", "0", *fast, *sampling])  # ≤ 3 calls a turn
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    turns = [json.loads(line) for line in out]
    assert len(turns) == 2
    for turn in turns:  # whatever the tiny model does, every turn is accounted for
        # one intent call, or two when the tiny model's plan copies the catalog (asked again)
        assert turn["usage"]["intent"]["lm_calls"] in (1, 2)
        assert turn["total_usage"]["input_tokens"] > 0
