"""The NLT benchmarks: episodes, programs per strategy, exact-match scoring, options, summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import pytest

from freyr_dspy.benchmarks import EvalOptions, Step, get_benchmark
from freyr_dspy.benchmarks.nlt._benchmark import NltBenchmark
from freyr_dspy.benchmarks.nlt._summary import summarize_records
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation import StepRecord, run_episode
from freyr_dspy.program import to_prediction
from freyr_dspy.schemas import CallRecord, Failure, Outcome, Result
from freyr_dspy.testing import FakeCall, FunctionLM

TOOLS = ["Past Purchases", "Talk to a Human", "Available discounts"]
SCENARIO = {
    "scenario": "mini",
    "tools": [{"name": n, "description": f"about {n.lower()}"} for n in TOOLS],
    "prompts": {"nlt": "PAPER NLT PROMPT", "structured": "PAPER STRUCTURED PROMPT"},
    "inputs": [
        {"id": 1, "message": "where is my order?", "expected_tools": ["Past Purchases"]},
        {
            "id": 2,
            "message": "a human, and any coupons?",
            "expected_tools": ["Talk to a Human", "Available discounts"],
        },
        {"id": 3, "message": "great show!", "expected_tools": []},
    ],
}


@pytest.fixture
def options(tmp_path: Path) -> EvalOptions:
    (tmp_path / "nlt").mkdir()
    (tmp_path / "nlt" / "mini.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    return EvalOptions(data_dir=tmp_path)


BENCH = NltBenchmark("mini")


def step(expected: list[str]) -> Step:
    return Step(id="1", message="m", expected={"tools": expected, "catalog": TOOLS})


def prediction(*called: str, ok: bool = True, failure: Failure | None = None) -> dspy.Prediction:
    calls = [CallRecord(tool=name, outcome=Outcome(ok=ok, message="")) for name in called]
    return to_prediction(Result(reply="", strategy="nlt", calls=calls, failure=failure))


def test_registered_benchmarks() -> None:
    for name in ("nlt-alex", "nlt-sage"):
        bench = get_benchmark(name)
        assert bench.strategies == ("nlt", "native", "prompted", "freyr", "gated")


def test_episodes(options: EvalOptions) -> None:
    episodes = BENCH.episodes(options)
    assert [e.id for e in episodes] == ["1", "2", "3"]
    assert episodes[1].steps[0].expected == {
        "tools": ["Talk to a Human", "Available discounts"],
        "catalog": TOOLS,
    }
    assert {e.case for e in episodes} == {"mini"}
    limited = EvalOptions(data_dir=options.data_dir, limit=2)
    assert len(BENCH.episodes(limited)) == 2


@pytest.mark.parametrize(
    ("called", "expected", "success", "extra", "missing"),
    [
        (["Past Purchases"], ["Past Purchases"], 1.0, [], []),
        (["check_past_purchases"], ["Past Purchases"], 1.0, [], []),
        ([], [], 1.0, [], []),
        (["Past Purchases", "Talk to a Human"], ["Past Purchases"], 0.0, ["Talk to a Human"], []),
        (
            ["Past Purchases"],
            ["Past Purchases", "Available discounts"],
            0.0,
            [],
            ["Available discounts"],
        ),
        (["Talk to a Human"], [], 0.0, ["Talk to a Human"], []),
    ],
)
def test_exact_match(
    called: list[str], expected: list[str], success: float, extra: list[str], missing: list[str]
) -> None:
    score = BENCH.score(step(expected), None, prediction(*called))
    assert score.success == success
    assert (score.diagnostics["extra"], score.diagnostics["missing"]) == (extra, missing)
    assert score.metrics["extra"] == len(extra) and score.metrics["missing"] == len(missing)
    assert (score.failure_kind is None) == (success == 1.0)


def test_failed_calls_do_not_count_and_failures_are_classified() -> None:
    assert BENCH.score(step(["Past Purchases"]), None, prediction("nope", ok=False)).success == 0
    parse = prediction(failure=Failure(kind="parse", detail="selection could not be parsed"))
    assert BENCH.score(step(["Past Purchases"]), None, parse).failure_kind == "parse"
    model = prediction(failure=Failure(kind="model", detail="tool_selection model failed: timeout"))
    assert BENCH.score(step(["Past Purchases"]), None, model).failure_kind == "model"
    assert BENCH.score(step(["Past Purchases"]), None, prediction()).failure_kind == "selection"


@pytest.mark.parametrize(
    ("strategy", "names"),
    [
        ("nlt", TOOLS),
        ("freyr", TOOLS),
        ("gated", TOOLS),
        (
            "prompted",
            ["check_past_purchases", "check_talk_to_a_human", "check_available_discounts"],
        ),
    ],
)
def test_programs_per_strategy(options: EvalOptions, strategy: str, names: list[str]) -> None:
    program = BENCH.make_program(strategy, options)
    assert program.toolbox.names == names
    # Only the selected set is scored: strategies that can skip the reply are built to.
    expected = {"nlt": {"respond": False}, "gated": {"inner": {"name": "nlt"}, "respond": False}}
    assert program.strategy.config() == expected.get(strategy, {})


def test_paper_prompt_replaces_the_selector_instructions(options: EvalOptions) -> None:
    paper = EvalOptions(data_dir=options.data_dir, extra={"prompt": "paper"})
    nlt = BENCH.make_program("nlt", paper)
    assert nlt.role("tool_selection").predict.signature.instructions == "PAPER NLT PROMPT"
    assert nlt.catalog_level == "names"
    prompted = BENCH.make_program("prompted", paper)
    assert prompted.role("prompted").predict.signature.instructions == "PAPER STRUCTURED PROMPT"
    freyr = BENCH.make_program("freyr", paper)  # no paper prompt for FREYR: unchanged
    assert "PAPER" not in freyr.role("intent").predict.signature.instructions
    default = BENCH.make_program("nlt", options)
    assert default.role("tool_selection").predict.signature.instructions.startswith("Decide")


def test_bad_prompt_options(options: EvalOptions, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown prompt 'novel'"):
        BENCH.make_program("nlt", EvalOptions(data_dir=options.data_dir, extra={"prompt": "novel"}))
    bare = {**SCENARIO, "prompts": {}}
    (options.data_dir / "nlt" / "mini.json").write_text(json.dumps(bare), encoding="utf-8")
    with pytest.raises(ConfigError, match="has no 'nlt' prompt"):
        BENCH.make_program("nlt", EvalOptions(data_dir=options.data_dir, extra={"prompt": "paper"}))


def yes_for(*wanted: str) -> Any:
    def answer(call: FakeCall) -> dict[str, str]:
        lines = [f"{n} -- {'YES' if n in wanted else 'NO'}" for n in TOOLS]
        return {"thinking": "t", "assessment": "\n".join(lines) + "\nAssessment finished."}

    return answer


def test_tools_file_reaches_the_selector(options: EvalOptions, tmp_path: Path) -> None:
    alt = tmp_path / "alt.json"
    alt.write_text(
        json.dumps({"tools": [{"name": "Past Purchases", "description": "REWORDED"}]}),
        encoding="utf-8",
    )
    engine = FunctionLM(yes_for("Past Purchases"))
    reworded = EvalOptions(data_dir=options.data_dir, extra={"tools_file": str(alt)})
    program = BENCH.make_program("nlt", reworded)
    program.set_lm(dspy.LM("fake/alt", engine=engine, cache=False))
    run_episode(BENCH, program, BENCH.episodes(reworded)[0])
    assert "- Past Purchases: REWORDED" in engine.calls[0].inputs["tools"]


def test_end_to_end_nlt_and_prompted_on_fakes(options: EvalOptions) -> None:
    answers = {
        "where is my order": ("Past Purchases",),
        "a human": ("Talk to a Human", "Available discounts"),
        "great show": (),
    }

    def nlt_answer(call: FakeCall) -> Any:
        wanted = next(v for k, v in answers.items() if k in call.inputs["message"])
        return yes_for(*wanted)(call)

    def prompted_answer(call: FakeCall) -> Any:
        if call.inputs["observations"] != "none":
            return {"response": "done"}
        wanted = next(v for k, v in answers.items() if k in call.inputs["message"])
        lines = [
            json.dumps({"tool": "check_" + w.lower().replace(" ", "_"), "parameters": {}})
            for w in wanted
        ]
        return {"response": "\n".join(lines) or "Thanks!"}

    records: list[StepRecord] = []
    for strategy, fn in (("nlt", nlt_answer), ("prompted", prompted_answer)):
        program = BENCH.make_program(strategy, options)
        program.set_lm(dspy.LM(f"fake/{strategy}", engine=FunctionLM(fn), cache=False))
        for episode in BENCH.episodes(options):
            records.extend(run_episode(BENCH, program, episode))
    assert [r.success for r in records] == [1.0] * 6
    summary = BENCH.summarize(records)["strategies"]
    assert summary["nlt"]["accuracy"] == 1.0 and summary["nlt"]["lm_calls"] == 1.0
    assert summary["prompted"]["inputs"] == 3


def record(strategy: str, episode: str, run: int, success: float, tokens: int) -> StepRecord:
    return StepRecord(
        benchmark="nlt-mini",
        strategy=strategy,
        run=run,
        case="mini",
        episode=episode,
        step=episode,
        success=success,
        input_tokens=tokens,
        output_tokens=tokens // 10,
        lm_calls=1,
        metrics={"extra": 1 - success},
    )


def test_summary_statistics() -> None:
    records = [
        record("native", "1", 0, 1.0, 200),
        record("native", "2", 0, 0.0, 200),
        record("native", "1", 1, 0.0, 200),
        record("native", "2", 1, 0.0, 200),
        record("nlt", "1", 0, 1.0, 100),
        record("nlt", "2", 0, 0.0, 100),
        record("nlt", "1", 1, 1.0, 100),
        record("nlt", "2", 1, 0.0, 100),
    ]
    summary = summarize_records(records)
    nlt, native = summary["strategies"]["nlt"], summary["strategies"]["native"]
    assert nlt["accuracy"] == 0.5 and native["accuracy"] == 0.25
    assert nlt["variance_runs"] == 0.0 and native["variance_runs"] == pytest.approx(0.125)
    assert nlt["variance_inputs"] == pytest.approx(0.25)
    assert (nlt["runs"], nlt["inputs"], nlt["requests"]) == (2, 2, 4)
    assert summary["tokens_in_vs_native"] == {"nlt": 0.5}
    assert summarize_records(records[4:])["tokens_in_vs_native"] == {}


def test_a_search_gives_models_to_the_roles_the_benchmark_builds(options: EvalOptions) -> None:
    """NLT builds ``gated`` around ``nlt``: its trials choose a tool_selection model, no intent."""
    from freyr_dspy.search import SearchSpace, baseline
    from freyr_dspy.search._study import validate_space, with_benchmark_roles

    space = SearchSpace(candidates={"*": ("fake/rules",)}, strategies=("gated", "freyr"))
    searched = with_benchmark_roles(space, BENCH, options)
    assert searched.roles_of("gated") == (
        "library",
        "tool_selection",
        "parameters",
        "summary",
        "chat",
    )
    assert searched.roles_of("freyr") == ("intent", "confirm", "parameters", "summary", "chat")
    validate_space(searched)
    config, params = baseline(searched)
    assert config.strategy == "gated" and "sampling.tool_selection.temperature" in params
    assert "sampling.intent.temperature" not in params
    assert set(config.assignment) == set(BENCH.make_program("gated", options).role_names)
    assert searched.describe() == space.describe()  # derived: the study's identity is unchanged
