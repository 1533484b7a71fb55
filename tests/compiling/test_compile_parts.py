"""The compile study's parts: confirm demos that say no, fitted margins, switches from failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import EvalOptions, step_example
from freyr_dspy.compiling._candidates import Candidate, PoolSpec, toggled, with_settings
from freyr_dspy.compiling._margins import MarginRow, fit_margin
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.compiling._optimizers import OptimizerConfig
from freyr_dspy.compiling._pools import pooled_demos, with_pool
from freyr_dspy.compiling._proposals import demo_proposals, margin_proposals, switch_proposals
from freyr_dspy.compiling._rows import TrainingRow, planned_tools
from freyr_dspy.datasets import ToolCallBenchmark, rows_from
from freyr_dspy.evaluation import StepRecord
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import DEMO_META, demos_for
from freyr_dspy.tools import Tool, Toolbox


def send_email(to: str, body: str) -> str:
    """Send a new email."""
    return "sent"


def forward_email(message_id: str, to: str) -> str:
    """Forward an email already received."""
    return "forwarded"


BOX = Toolbox([Tool.from_function(send_email), Tool.from_function(forward_email)])
PRESET = "freyr+abstain+scored_confirm"


def _examples(rows: list[dict[str, Any]]) -> tuple[list[dspy.Example], ToolCallBenchmark]:
    bench = ToolCallBenchmark(rows=rows_from(rows, {"default": BOX}), toolbox=BOX)
    episodes = bench.episodes(EvalOptions(data_dir=Path(".")))
    return [step_example(e.steps[0]) for e in episodes], bench


ROWS = [
    {"id": "fwd", "message": "Forward msg-7 to ann@x.org",
     "calls": [{"name": "forward_email", "arguments": {"message_id": "msg-7", "to": "ann@x.org"}}]},
    {"id": "none", "message": "Write me a poem about email", "calls": []},
]  # fmt: skip


def test_confirm_demos_say_false_for_the_tools_the_program_wrongly_planned() -> None:
    examples, bench = _examples(ROWS)
    program = FreyrProgram(toolbox=BOX, strategy=PRESET)
    metric = BenchmarkMetric(bench, program.coerce_state)
    # the uncompiled program planned send_email beside forward_email, and send_email alone
    # for the poem: the demos replay those plans, answered from the gold
    plans = {"fwd": ["send_email", "forward_email"], "none": ["send_email"]}
    demos = pooled_demos(program, examples, metric, ("intent", "confirm"), plans=plans)
    confirm = {d["message"]: d["asked"] for d in demos[("confirm", "predict")]}
    assert confirm == {
        "Forward msg-7 to ann@x.org": {"send_email": False, "forward_email": True},
        "Write me a poem about email": {"send_email": False},
    }
    assert all(d[DEMO_META]["decision"] == "rejects" for d in demos[("confirm", "predict")])
    intents = {d["message"]: d["intents"] for d in demos[("intent", "predict")]}
    assert intents == {  # the planning demos still show the gold plan
        "Forward msg-7 to ann@x.org": ["forward_email"],
        "Write me a poem about email": ["conversation"],
    }
    # without the program's plans every confirm demo can only say true (the old defect)
    gold_only = pooled_demos(program, examples, metric, ("confirm",))
    assert all(all(d["asked"].values()) for d in gold_only[("confirm", "predict")])


def test_a_pool_goes_on_the_named_roles_only_with_the_tool_text_left_out() -> None:
    examples, bench = _examples(ROWS)
    program = FreyrProgram(toolbox=BOX, strategy=PRESET)
    metric = BenchmarkMetric(bench, program.coerce_state)
    knobs = OptimizerConfig(name="nearest", demo_omit=("tools", "tool"))
    spec = PoolSpec(roles=("intent", "parameters"), k=2)
    pooled = with_pool(program, examples, metric, spec, knobs, plans={})
    pools = {
        r: [getattr(p, "demo_pool", None) for p in pooled.role(r).predictors()]
        for r in pooled.role_names
    }
    assert pools["confirm"] == [None] and pools["summary"] == [None]
    (intent,) = pools["intent"]
    (parameters,) = pools["parameters"]
    assert intent is not None and parameters is not None
    assert all("tools" not in d for d in intent["demos"])
    # a parameters demo is for its own tool: shown for that tool's spec, not the other's
    [demo] = parameters["demos"]
    assert demo[DEMO_META]["scope"] == ["forward_email"]
    predictor = pooled.role("parameters").predict
    spec_text = BOX.subset(names=["forward_email"]).catalog("full")
    assert demos_for(predictor, {"message": "Forward msg-9 to bo@x.org", "tool": spec_text})
    other = BOX.subset(names=["send_email"]).catalog("full")
    assert demos_for(predictor, {"message": "Forward msg-9 to bo@x.org", "tool": other}) == []


def _margin_row(i: int, margin: float, wanted: bool, success: float) -> MarginRow:
    return MarginRow(
        id=f"r{i}", verdicts=(("t", margin),), success=success, gold=("t",) if wanted else ()
    )


def test_a_margin_is_fitted_where_the_logged_checks_show_it_wins_rows() -> None:
    # wanted tools score 0.2-0.8 and were dropped by the margin of 1.0; unwanted ones score
    # below 0: a margin of about 0.1 keeps every wanted tool and still drops the unwanted
    rows = [_margin_row(i, 0.2 + 0.1 * i, True, 0.0) for i in range(6)]
    rows += [_margin_row(10 + i, -1.0 - 0.1 * i, False, 1.0) for i in range(6)]
    rows += [_margin_row(20 + i, 2.0 + i, True, 1.0) for i in range(4)]  # kept right already
    fitted = fit_margin("abstain_margin", rows, 1.0)
    assert fitted is not None
    assert -1.0 < fitted.value <= 0.2
    # 6 rows won if their arguments are right as often as the kept ones' (all 4 here)
    assert fitted.predicted_gain == 6.0 and fitted.loo_gain > 0
    assert "abstain_margin 1 ->" in fitted.reason()


def test_no_margin_is_proposed_when_the_logged_checks_show_no_gain() -> None:
    rows = [_margin_row(i, 2.0 + i, True, 1.0) for i in range(5)]
    rows += [_margin_row(10 + i, -1.0 - i, False, 1.0) for i in range(5)]
    assert fit_margin("abstain_margin", rows, 1.0) is None
    assert fit_margin("abstain_margin", rows[:3], 1.0) is None  # too few rows to fit


def _record(
    row: str,
    success: float,
    kind: str | None,
    calls: list[str],
    verdicts: list[tuple[str, float, int]] = (),
) -> StepRecord:  # type: ignore[assignment]
    return StepRecord(
        benchmark="calls", strategy="freyr", run=0, case="c", episode=row, step=row,
        success=success, failure_kind=kind,
        calls=[{"tool": t, "outcome": {"ok": True, "message": ""}} for t in calls],
        diagnostics={"plan": calls, "verdicts": [
            {"tool": t, "margin": m, "kept": m >= 1.0, "plan_size": n} for t, m, n in verdicts]},
    )  # fmt: skip


def test_switches_are_proposed_from_the_failures_they_address_most_rows_first() -> None:
    rows = [TrainingRow(f"p{i}", "parallel", "box", ("set_alarm", "set_alarm")) for i in range(6)]
    rows += [TrainingRow(f"n{i}", "near-miss", "box", ()) for i in range(3)]
    rows += [TrainingRow(f"o{i}", "one-call", "box", ("get_weather",)) for i in range(11)]
    records = {f"p{i}": _record(f"p{i}", 0.0, "missed-call", ["set_alarm"]) for i in range(6)}
    records |= {f"n{i}": _record(f"n{i}", 0.0, "extra-call", ["set_alarm"]) for i in range(3)}
    records |= {f"o{i}": _record(f"o{i}", 1.0, None, ["get_weather"]) for i in range(11)}
    current = Candidate(strategy=PRESET)
    proposals = switch_proposals(current, rows, records)
    # one switch per failure first: refill (the same failure as split_calls) comes last
    assert [p.candidate.strategy for p in proposals] == [
        toggled(PRESET, "split_calls", True),
        toggled(PRESET, "require_stated", True),
        toggled(PRESET, "refill", True),
    ]
    assert (
        proposals[0].reason
        == "split_calls: 6 rows ask one tool for several values, fewer calls made"
    )
    # a switch the caller does not allow, or one no failure calls for, is never proposed
    assert switch_proposals(current, rows, records, allowed=("asks", "replan")) == []


def test_demos_on_parameters_come_first_when_wrong_values_dominate() -> None:
    rows = [TrainingRow(f"r{i}", "one-call", "box", ("t",)) for i in range(10)]
    records = {f"r{i}": _record(f"r{i}", 0.0, "arguments", ["t"]) for i in range(4)}
    records |= {f"r{i}": _record(f"r{i}", 1.0, None, ["t"]) for i in range(4, 10)}
    roles = ("intent", "confirm", "parameters", "summary", "chat")
    proposals = demo_proposals(Candidate(strategy=PRESET), rows, records, roles, 3)
    assert [p.candidate.pool.roles for p in proposals if p.candidate.pool] == [
        ("intent", "confirm", "parameters"),
        ("intent", "confirm"),
    ]
    assert demo_proposals(Candidate(strategy=PRESET), rows, records, roles, 0) == []


def test_margins_are_proposed_alone_and_together_from_the_logged_verdicts() -> None:
    rows = [TrainingRow(f"w{i}", "one-call", "box", ("t",)) for i in range(6)]
    rows += [TrainingRow(f"u{i}", "near-miss", "box", ()) for i in range(6)]
    records = {
        f"w{i}": _record(f"w{i}", 0.0, "missed-call", [], [("t", 0.3 + 0.1 * i, 1)])
        for i in range(6)
    }
    records |= {f"u{i}": _record(f"u{i}", 1.0, None, [], [("t", -1.0 - i, 1)]) for i in range(6)}
    proposals = margin_proposals(Candidate(strategy=PRESET), rows, records)
    assert len(proposals) == 1 and "abstain_margin=" in proposals[0].candidate.strategy
    assert margin_proposals(Candidate(strategy="freyr"), rows, records) == []  # nothing scored


def test_planned_tools_are_read_from_the_verdicts_else_from_the_plan() -> None:
    record = _record("r", 0.0, None, ["a"], [("a", 2.0, 2), ("b", 0.1, 2)])
    assert planned_tools(record) == ["a", "b"]
    assert planned_tools(_record("r", 0.0, None, ["a"])) == ["a"]


def test_candidate_labels_are_mended_not_refused() -> None:
    assert with_settings("freyr+calibrate", {"asks": True}) == "freyr+asks"
    label = with_settings(PRESET, {"abstain_margin": 0.25})
    assert label.endswith("abstain_margin=0.25")
    assert "abstain_margin" not in toggled(label, "abstain", False)  # the margin needs abstain
