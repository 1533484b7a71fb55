"""The compile study: cross-validated trials, the guard against the baseline, resumption."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import freyr_dspy
from freyr_dspy.backends._replay import ReplayMemo, replaying
from freyr_dspy.benchmark import Episode, Step
from freyr_dspy.program import FreyrProgram
from freyr_dspy.search._folds import make_folds
from freyr_dspy.search._selection import Scored, choose, sign_test, wilson_interval
from freyr_dspy.settings import Settings
from freyr_dspy.testing import Answer, FakeCall, FakeEngine, register_fake, unregister_fake
from freyr_dspy.tools import Tool, Toolbox
from tests.support.compile_fakes import demos_shown


def weather(city: str) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


def alarm(time: str) -> str:
    """Set an alarm clock at a time of day."""
    return f"alarm at {time}"


BOX = Toolbox([Tool.from_function(weather), Tool.from_function(alarm)])
CITIES = ["Oslo", "Lima", "Rome", "Pune", "Kyiv", "Bern", "Riga", "Doha", "Baku", "Suva"]
TIMES = ["06:30", "07:15", "05:45", "08:00", "09:20", "10:10", "04:50", "11:05"]


def examples() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"id": f"w{i}", "message": f"How is the weather in {city}?", "category": "weather",
         "calls": [{"name": "weather", "arguments": {"city": city}}]}
        for i, city in enumerate(CITIES)
    ]  # fmt: skip
    rows += [
        {"id": f"a{i}", "message": f"Wake me at {time}.", "category": "alarm",
         "calls": [{"name": "alarm", "arguments": {"time": time}}]}
        for i, time in enumerate(TIMES)
    ]  # fmt: skip
    return rows


class Teachable(FakeEngine):
    """Plans the right tool only when a prompt shows demos (``taught``), else no tool.

    ``taught=False`` makes the opposite model: right untaught, wrong (no tool) with demos.
    """

    def __init__(self, taught: bool = True) -> None:
        super().__init__()
        self.taught = taught

    def answer(self, call: FakeCall) -> Answer:
        message = call.inputs.get("message", "")
        tool = "weather" if "weather" in message else "alarm"
        if call.role == "intent":
            right = (demos_shown(call.prompt) > 0) == self.taught
            return {"intents": [tool] if right else ["conversation"]}
        if call.role == "parameters":
            value = re.search(r"in (\w+)\?|at ([\d:]+)", message)
            assert value is not None
            city, time = value.groups()
            return {"arguments": {"city": city} if city else {"time": time}}
        if call.role == "confirm":
            return {"asked": {name: True for name in ("weather", "alarm")}}
        return {"reply": "OK."}


#: The engine behind each fake model id a test made.
ENGINES: dict[str, Teachable] = {}


@pytest.fixture
def fake() -> Iterator[Callable[[bool], str]]:
    names: list[str] = []

    def make(taught: bool) -> str:
        name = f"teachable_{taught}_{len(names)}"
        ENGINES[f"fake/{name}"] = engine = Teachable(taught)
        register_fake(name, engine)
        names.append(name)
        return f"fake/{name}"

    yield make
    for name in names:
        unregister_fake(name)


def baseline(model: str) -> FreyrProgram:
    return FreyrProgram.for_model(model, toolbox=BOX, strategy="freyr")


def compile_(model: str, tmp_path: Path, **options: Any) -> Any:
    options = {
        "trials": 4, "timeout": None, "switches": (), "optimizers": ("labeled", "nearest"),
        "max_demos": 2, "folds": 3, "settings": Settings(project_dir=tmp_path), **options,
    }  # fmt: skip
    return freyr_dspy.compile(baseline(model), examples(), **options)


def test_a_model_that_needs_demos_gets_them_and_the_guard_lets_them_through(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    outcome = compile_(fake(True), tmp_path)
    assert outcome.baseline.accuracy == 0.0  # untaught: never a tool
    assert outcome.choice.passed and outcome.config.compiled
    assert outcome.shipped.accuracy == 1.0
    assert outcome.choice.wins == 18 and outcome.choice.losses == 0
    assert "chose trial" in outcome.choice.sentence()
    # the shipped program was fitted on every row, and it answers
    demos = [demo for p in outcome.program.predictors() for demo in p.demos]
    assert demos and all("tools" not in demo for demo in demos)  # the user's tools stay out
    result = outcome.program(message="How is the weather in Oslo?", calls_only=True).result
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}]
    # the artifact records how it was chosen, and loads
    path = freyr_dspy.save(outcome.program, tmp_path / "out.json", outcome.meta)
    meta, _ = freyr_dspy.artifacts.read_artifact(path)
    assert meta.search is not None and meta.search["shipped"] == outcome.choice.shipped
    assert meta.scores.before == 0.0 and meta.scores.after == 1.0
    assert freyr_dspy.load(path, toolbox=BOX).strategy_name == "freyr"


def test_configurations_worse_than_the_baseline_are_never_shipped(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    outcome = compile_(fake(False), tmp_path)
    assert outcome.baseline.accuracy == 1.0
    assert all(t.accuracy < 1.0 for t in outcome.trials if t.config.compiled)
    assert outcome.choice.shipped == outcome.choice.baseline == 0
    assert not outcome.config.compiled and not any(p.demos for p in outcome.program.predictors())
    assert outcome.choice.sentence().startswith("kept the baseline")


def test_held_out_rows_are_scored_before_and_after_and_never_chosen_on(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    held = [
        {"message": "How is the weather in Turin?", "calls": [
            {"name": "weather", "arguments": {"city": "Turin"}}]},
    ]  # fmt: skip
    outcome = compile_(fake(True), tmp_path, test=held)
    assert outcome.test_before is not None and outcome.test_after is not None
    assert (outcome.test_before.accuracy, outcome.test_after.accuracy) == (0.0, 1.0)
    assert "held-out rows: 0.000 before (baseline) -> 1.000 after (1 rows)" in outcome.lines()
    assert outcome.n_rows == 18  # the held-out row is not among the rows chosen on


def test_a_rerun_resumes_the_study_and_pays_for_no_row_twice(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    model = fake(True)
    first = compile_(model, tmp_path, trials=2)
    assert [t.number for t in first.trials] == [0, 1]
    engine = ENGINES[model]
    second = compile_(model, tmp_path, trials=3)
    assert [t.number for t in second.trials] == [0, 1, 2]
    assert second.study_name == first.study_name
    assert second.trials[:2] == first.trials  # read back from the study, not run again
    calls = len(engine.calls)
    third = compile_(model, tmp_path, trials=3)
    assert third.trials == second.trials and third.choice == second.choice
    assert len(engine.calls) == calls  # nothing left to run: not one model call


def test_a_clearly_worse_trial_is_pruned_before_its_last_row(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    rows = [*examples(), *[{**r, "id": r["id"] + "b", "message": r["message"] + " "}
                           for r in examples()]]  # fmt: skip
    program = baseline(fake(False))
    outcome = freyr_dspy.compile(
        program, rows, trials=3, timeout=None, switches=(), optimizers=("labeled",),
        max_demos=2, folds=3, settings=Settings(project_dir=tmp_path),
    )  # fmt: skip
    pruned = [t for t in outcome.trials if t.state == "PRUNED"]
    assert pruned and all(t.rows_scored < len(rows) for t in pruned)


def test_folds_are_stratified_seeded_and_interleaved() -> None:
    episodes = [
        Episode(id=f"{case}{i}", case=case, steps=(Step(id=f"{case}{i}", message="m"),))
        for case in ("a", "b")
        for i in range(6)
    ]
    folds = make_folds(episodes, 3, seed=1)
    assert folds == make_folds(episodes, 3, seed=1)
    for fold in range(3):
        members = folds.rows_of(fold)
        assert sorted(m[0] for m in members) == ["a", "a", "b", "b"]
        assert set(folds.train_ids(fold)).isdisjoint(members)
    first_half = folds.order[:6]
    assert {row[0] for row in first_half} == {"a", "b"}


def test_the_guard_tests_the_choosing_not_the_chosen() -> None:
    folds = make_folds(
        [Episode(id=f"r{i}", case="c", steps=(Step(id=f"r{i}", message="m"),)) for i in range(20)],
        4,
    )
    rows = folds.order
    base = Scored(0, dict.fromkeys(rows, 0.0), tokens=10, seconds=1)
    # a configuration that wins where it was looked at by chance: right on 5 rows, which
    # another configuration of the same worth gets right elsewhere
    lucky = Scored(1, {r: float(i < 5) for i, r in enumerate(rows)}, tokens=10, seconds=1)
    other = Scored(2, {r: float(5 <= i < 10) for i, r in enumerate(rows)}, tokens=10, seconds=1)
    choice = choose([base, lucky, other], 0, folds)
    assert choice.candidate in (1, 2)
    assert choice.wins + choice.losses <= 10
    good = Scored(3, dict.fromkeys(rows, 1.0), tokens=10, seconds=1)
    assert choose([base, good], 0, folds).passed


def test_sign_test_and_wilson_interval() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(1 / 32)
    assert sign_test(9, 3) == pytest.approx(0.073, abs=0.001)
    low, high = wilson_interval(5, 10)
    assert low < 0.5 < high and (low, high) == pytest.approx((0.237, 0.763), abs=0.001)


def test_replay_memo_answers_identical_requests_once_and_counts_their_seconds() -> None:
    memo = ReplayMemo()
    made: list[str] = []

    def compute(text: str) -> Callable[[], str]:
        return lambda: made.append(text) or text.upper()

    assert memo.recall("complete", "a", compute("a")) == "A"
    assert memo.recall("complete", "a", compute("a")) == "A"
    assert memo.recall("score", "a", compute("b")) == "B"
    assert made == ["a", "b"] and (memo.hits, memo.misses) == (1, 2)

    class Engine:
        replay: ReplayMemo | None = None

    engine = Engine()
    with replaying([engine], memo):
        assert engine.replay is memo
    assert engine.replay is None
