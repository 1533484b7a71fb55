"""GEPA reflects only on predictors that ran, taking turns among them."""

from __future__ import annotations

import dspy

from freyr_dspy.compiling._gepa import RanPredictorsSelector


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
