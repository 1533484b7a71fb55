"""Demos chosen per request (``--optimizer nearest``): ranking, compile, artifact round trip."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from freyr_dspy.artifacts import load, program_state, save
from freyr_dspy.benchmarks._todo import TodoBenchmark
from freyr_dspy.compiling import OptimizerConfig
from freyr_dspy.compiling._compiler import CompileReport, compile_program
from freyr_dspy.compiling._job import report_meta
from freyr_dspy.errors import ArtifactError, ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting._demo_pool import (
    DEMO_META,
    attach_pool,
    check_pool,
    demos_for,
    nearest,
    pool_size,
    request_field,
)
from freyr_dspy.testing import unregister_fake
from tests.support.compile_fakes import OPTIONS, SkilledLM, demos_shown, project, skilled_program


def test_nearest_ranks_by_shared_rare_words_closest_last() -> None:
    texts = ["Add a task called milk.", "List my open tasks.", "Remove the task wash car."]
    assert nearest(texts, "Please remove the wash car task", 1) == [2]
    # the two nearest, least alike first: "task" is in every text, "my"/"open" only in one
    assert nearest(texts, "show my open tasks and add milk", 2) == [0, 1]
    # ties keep the pool's order; no shared word at all: nothing is near
    assert nearest(["my task", "my list"], "my day", 2) == [1, 0]
    assert nearest(texts, "zzz", 2) == []
    assert nearest([], "anything", 3) == []


def _predictor_with_pool(texts: list[str]) -> dspy.Predict:
    class Ask(dspy.Signature):
        question: str = dspy.InputField()
        answer: str = dspy.OutputField()

    predictor = dspy.Predict(Ask)
    predictor.demos = [dspy.Example(question="fixed", answer="0")]
    assert attach_pool(
        predictor, [{"question": t, "answer": str(i)} for i, t in enumerate(texts)], 1
    )
    return predictor


def test_a_demo_never_answers_its_own_request() -> None:
    predictor = _predictor_with_pool(["Block card 1234", "Block card 9876 now"])
    [shown] = demos_for(predictor, {"question": "Block card 1234"})
    assert shown["question"] == "Block card 9876 now"


def test_a_request_sharing_no_word_with_the_pool_gets_the_fixed_demos() -> None:
    predictor = _predictor_with_pool(["Block card 1234", "Open an account"])
    assert demos_for(predictor, {"question": "Wie spät ist es?"}) == predictor.demos
    assert demos_for(predictor, {"question": ""}) == predictor.demos
    assert demos_for(predictor, {}) == predictor.demos


def test_a_signature_without_a_request_field_keeps_its_fixed_demos() -> None:
    class Sums(dspy.Signature):
        numbers: str = dspy.InputField()
        total: str = dspy.OutputField()

    predictor = dspy.Predict(Sums)
    assert request_field(Sums) is None
    assert not attach_pool(predictor, [{"numbers": "1 2", "total": "3"}], k=1)
    predictor.demos = [dspy.Example(numbers="1 2", total="3")]
    assert demos_for(predictor, {"numbers": "4 5"}) == predictor.demos


@pytest.fixture
def nearest_report(tmp_path: Path) -> Iterator[tuple[CompileReport, SkilledLM]]:
    program, engine = skilled_program("pooled")
    report = compile_program(
        program,
        TodoBenchmark(),
        OptimizerConfig(name="nearest", max_demos=1, demo_roles=("intent",)),
        settings=project(tmp_path),
        options=OPTIONS,
    )
    yield report, engine
    unregister_fake("pooled")


def _intent_prompt(engine: SkilledLM, message: str) -> str:
    [call] = [c for c in engine.calls if c.role == "intent" and c.inputs["message"] == message][-1:]
    return call.prompt


def test_each_request_is_shown_the_training_request_most_like_it(
    nearest_report: tuple[CompileReport, SkilledLM],
) -> None:
    report, engine = nearest_report
    program: FreyrProgram = report.program
    intent = program.role("intent").predict
    assert pool_size(intent) == report.n_train  # one intent demo per training request
    assert all(pool_size(p) == 0 for p in program.role("parameters").predictors())

    shown = {}
    removal, question = "Remove the task called call mum.", "Which tasks are still open?"
    for message in (removal, question):
        result = program(message=message, state={"tasks": []}).result
        assert result.calls, message  # taught by its demo, the fake plans a call
        shown[message] = _intent_prompt(engine, message)
    assert "Remove the task wash car." in shown[removal]
    assert "List my open tasks." in shown[question]
    assert "Remove the task wash car." not in shown[question]


def test_the_pool_travels_in_the_artifact(
    nearest_report: tuple[CompileReport, SkilledLM], tmp_path: Path
) -> None:
    report, _ = nearest_report
    settings = project(tmp_path)
    meta = report_meta(report, benchmark="todo", options=OPTIONS)
    path = save(report.program, settings.compiled_dir / "todo-nearest.json", meta)
    loaded = load(path, settings=settings)
    assert program_state(loaded) == program_state(report.program)
    inputs = {"message": "Remove the task buy bread."}
    original, reloaded = report.program.role("intent").predict, loaded.role("intent").predict
    assert demos_for(reloaded, inputs) == demos_for(original, inputs)
    assert pool_size(reloaded) == pool_size(original) > 1


def test_an_optimizer_that_chooses_demos_drops_a_started_from_pool(
    nearest_report: tuple[CompileReport, SkilledLM], tmp_path: Path
) -> None:
    report, _ = nearest_report
    relabelled = compile_program(
        report.program,
        TodoBenchmark(),
        OptimizerConfig(name="labeled", max_demos=2),
        settings=project(tmp_path),
        options=OPTIONS,
        evaluate_before=False,
    )
    intent = relabelled.program.role("intent").predict
    assert pool_size(intent) == 0 and len(intent.demos) == 2
    assert pool_size(report.program.role("intent").predict) > 0  # the start is left as it was


def test_nearest_refuses_to_omit_the_request_it_matches_on(tmp_path: Path) -> None:
    program, _ = skilled_program("omitting")
    try:
        with pytest.raises(ConfigError, match="--demo-omit"):
            compile_program(
                program,
                TodoBenchmark(),
                OptimizerConfig(name="nearest", demo_omit=("message",)),
                settings=project(tmp_path),
                options=OPTIONS,
                evaluate_before=False,
            )
    finally:
        unregister_fake("omitting")


def test_an_optimizer_scoring_candidates_does_not_see_a_started_from_pool(
    nearest_report: tuple[CompileReport, SkilledLM], tmp_path: Path
) -> None:
    report, engine = nearest_report
    start = report.program
    for predictor in start.predictors():
        predictor.demos = []  # only the pool could teach the fake now
    engine.calls.clear()
    compile_program(
        start,
        TodoBenchmark(),
        OptimizerConfig(name="misses", max_demos=2),
        settings=project(tmp_path),
        options=OPTIONS,
        evaluate_before=False,
    )
    # misses first runs the start program on every training request: untaught, no demos
    first_runs = [c for c in engine.calls if c.role == "intent"][: report.n_train]
    assert first_runs and all(demos_shown(c.prompt) == 0 for c in first_runs)


def test_a_malformed_pool_in_a_file_is_refused_at_load(
    nearest_report: tuple[CompileReport, SkilledLM], tmp_path: Path
) -> None:
    import json

    report, _ = nearest_report
    settings = project(tmp_path)
    meta = report_meta(report, benchmark="todo", options=OPTIONS)
    path = save(report.program, settings.compiled_dir / "todo-nearest.json", meta)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["program"]["strategy.intent.predict"]["demo_pool"]["field"] = "state"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match="not a request field"):
        load(path, settings=settings)
    del document["program"]["strategy.intent.predict"]["demo_pool"]["k"]
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ArtifactError, match="malformed demo pool"):
        load(path, settings=settings)


def _contrastive(demos: list[dict[str, object]], k: int = 3) -> dspy.Predict:
    class Plan(dspy.Signature):
        message: str = dspy.InputField()
        tools: str = dspy.InputField()
        intents: list[str] = dspy.OutputField()

    predictor = dspy.Predict(Plan)
    assert attach_pool(predictor, demos, k, select="contrastive")
    return predictor


def _demo(message: str, intents: list[str], scope: list[str], decision: str) -> dict[str, object]:
    return {
        "message": message, "intents": intents,
        DEMO_META: {"scope": scope, "decision": decision},
    }  # fmt: skip


BANK = ["get_balance", "transfer", "block_card"]
HOME = ["set_light", "set_thermostat"]
POOL = [
    _demo("What is my balance?", ["get_balance"], BANK, "one"),
    _demo("Balance of my savings account please", ["get_balance"], BANK, "one"),
    _demo("Show the balance of checking", ["get_balance"], BANK, "one"),
    _demo("Open a new savings account", ["conversation"], BANK, "no-call"),
    _demo("Turn the balance of the lights down", ["set_light"], HOME, "one"),
]


def test_a_contrastive_pool_shows_only_demos_of_the_tools_the_request_offers() -> None:
    predictor = _contrastive(POOL)
    catalog = "\n".join(f"- {name}: ..." for name in BANK)
    shown = demos_for(predictor, {"message": "Balance of checking?", "tools": catalog})
    assert len(shown) == 3
    assert all(d[DEMO_META]["scope"] == BANK for d in shown)  # the lights demo never shows
    # the nearest all call get_balance: the last-ranked gives way to the no-call one
    assert shown[0]["message"] == "Open a new savings account"
    assert shown[-1]["message"] == "Show the balance of checking"  # the closest goes last


def test_a_contrastive_pool_needs_no_contrast_when_the_nearest_already_differ() -> None:
    predictor = _contrastive(POOL, k=2)
    catalog = "\n".join(f"- {name}: ..." for name in BANK)
    shown = demos_for(predictor, {"message": "open a savings account", "tools": catalog})
    assert {d[DEMO_META]["decision"] for d in shown} == {"one", "no-call"}


def test_a_request_to_tools_no_demo_was_made_for_gets_the_fixed_demos_none() -> None:
    predictor = _contrastive(POOL)
    predictor.demos = []
    shown = demos_for(predictor, {"message": "What is my balance?", "tools": "- play_song: x"})
    assert shown == []
    # a parameters-style prompt (one tool's spec) is matched to that very tool
    spec = _contrastive([
        {**_demo("Move 5 to Ann", [], ["transfer"], "other")},
        {**_demo("Block card 12", [], ["block_card"], "other")},
    ], k=2)  # fmt: skip
    shown = demos_for(spec, {"message": "Move 9 to Bo", "tools": "- transfer: Send money."})
    assert [d["message"] for d in shown] == ["Move 5 to Ann"]


def test_a_contrastive_pool_round_trips_through_an_artifact_state() -> None:
    predictor = _contrastive(POOL)
    pool = predictor.demo_pool
    assert pool["select"] == "contrastive" and len(pool["demos"]) == 5
    check_pool(predictor)  # a valid pool: no error
    predictor.demo_pool = {**pool, "select": "farthest"}
    with pytest.raises(ValueError, match="malformed demo pool"):
        check_pool(predictor)
