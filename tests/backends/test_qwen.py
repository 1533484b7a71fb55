"""The real Qwen2.5-Coder models, in-process: a known request must give a known call.

These are the quality checks of the shipped models (SmolLM2 cannot do the task, so its tests only
check mechanics). Greedy decoding keeps them deterministic; each takes tens of seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.backends import is_installed
from freyr_dspy.backends._embedded import shared_engine
from freyr_dspy.cli import main
from freyr_dspy.settings import DEFAULT_MODEL, FAST_MODEL

pytestmark = pytest.mark.embedded

GREEDY = ["--sampling", "temperature=0", "--sampling", "seed=0"]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:  # type: ignore[type-arg]
    code = main(["run", "--json", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data: dict = json.loads(captured.out)  # type: ignore[type-arg]
    return data


@pytest.mark.skipif(not is_installed(DEFAULT_MODEL), reason="the Qwen 1.5B parts are not installed")
def test_default_model_adds_the_task_it_is_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "-m", "Add a task called buy milk with priority 2", *GREEDY)
    [call] = data["calls"]
    assert (call["tool"], call["arguments"]) == ("add_task", {"title": "buy milk", "priority": 2})
    assert call["outcome"]["ok"] and data["failure"] is None
    assert data["state"]["tasks"] == [{"title": "buy milk", "priority": 2, "done": False}]
    assert data["reply"]  # the summary role answered
    engine = shared_engine(DEFAULT_MODEL)
    assert engine.prompt_tokens_evaluated <= engine.prompt_tokens_sent


@pytest.mark.skipif(not is_installed(FAST_MODEL), reason="the Qwen 0.5B parts are not installed")
def test_fast_model_calls_the_known_tool_natively(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"tasks": [{"title": "call mum", "priority": 1, "done": False}]}))
    data = run_json(
        capsys,
        "-m",
        "Add a task called water the plants",
        "--model",
        FAST_MODEL,
        "--strategy",
        "native",  # through Qwen's own <tool_call> template
        "--state",
        str(state),
        *GREEDY,
    )
    assert [c["tool"] for c in data["calls"] if c["outcome"]["ok"]] == ["add_task"]
    titles = [t["title"] for t in data["state"]["tasks"]]
    assert titles == ["call mum", "water the plants"]
