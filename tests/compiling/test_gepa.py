"""GEPA reflects only on predictors that ran, taking turns among them, on a budget that works."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest

from freyr_dspy.compiling._gepa import RanPredictorsSelector
from freyr_dspy.compiling._optimizers import gepa_budget, gepa_split
from freyr_dspy.testing import unregister_fake


class Select(dspy.Signature):
    """Pick tools."""

    message: str = dspy.InputField()
    tools: list[str] = dspy.OutputField()


class Reply(dspy.Signature):
    """Reply."""

    message: str = dspy.InputField()
    reply: str = dspy.OutputField()


class Summary(dspy.Signature):
    """Summarise."""

    outcomes: str = dspy.InputField()
    summary: str = dspy.OutputField()


PREDICTORS = [
    ("select", dspy.Predict(Select)),
    ("reply", dspy.Predict(Reply)),
    ("sum", dspy.Predict(Summary)),
]
CANDIDATE = {name: "instructions" for name, _ in PREDICTORS}


def trajectory(*ran: dspy.Predict) -> dict:
    return {"trace": [(p, {"message": "m"}, dspy.Prediction()) for p in ran]}


def choose(selector: RanPredictorsSelector, trajectories: list[dict]) -> list[str]:
    return selector(None, trajectories, [0.0], 0, CANDIDATE)


def test_only_predictors_that_ran_are_chosen_in_turn() -> None:
    selector = RanPredictorsSelector(PREDICTORS)
    select = PREDICTORS[0][1]
    # an instruction-changed copy (what GEPA runs) is still recognised by its fields
    rewritten = dspy.Predict(Summary.with_instructions("Summarise better."))
    batch = [trajectory(select), trajectory(select, rewritten)]
    assert [choose(selector, batch) for _ in range(4)] == [["select"], ["sum"], ["select"], ["sum"]]
    assert choose(selector, [trajectory(select)]) == ["select"]


def test_no_trace_falls_back_to_every_predictor_in_turn() -> None:
    selector = RanPredictorsSelector(PREDICTORS)
    assert [choose(selector, [])[0] for _ in range(3)] == ["select", "reply", "sum"]


def test_gepa_keeps_validation_rows_apart_and_its_default_budget_reaches_a_rewrite() -> None:
    rows = [dspy.Example(message=str(i)).with_inputs("message") for i in range(60)]
    train, val = gepa_split(rows)
    assert (len(train), len(val)) == (48, 12) and not set(map(id, train)) & set(map(id, val))
    # the seed's pass over the 12 validation rows, 12 rewrites on minibatches of 3, one win
    assert gepa_budget(len(val), 3) == 12 + 72 + 12
    assert gepa_budget(len(val), 3) > len(rows)  # the old default (40) was spent on the seed


def test_a_gepa_budget_that_cannot_try_one_rewrite_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from freyr_dspy.cli import main
    from tests.support.compile_fakes import project, skilled_program

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    project(tmp_path)
    skilled_program()
    code = main([
        "compile", "--no-search", "--benchmark", "todo", "--model", "fake/skilled",
        "--optimizer", "gepa", "--budget", "3",
    ])  # fmt: skip
    unregister_fake("skilled")
    err = capsys.readouterr().err
    assert code == 2 and "gepa needs at least" in err and "--budget 3 would return the seed" in err
