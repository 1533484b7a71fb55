"""The compile study: the baseline pass, stages scored as shipped, the guard, resumption."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import freyr_dspy
from freyr_dspy.backends import ReplayMemo, replaying
from freyr_dspy.compiling import CompileSettings
from freyr_dspy.compiling._guard import Scored, choose, make_folds, sign_test, wilson_interval
from freyr_dspy.compiling._rows import TrainingRow
from freyr_dspy.program import FreyrProgram
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
    ``needs_own_demo``: only a demo of the very same request teaches it (the request's text
    shown twice). ``fail_after``: the process dies after that many calls.
    """

    def __init__(self, taught: bool = True) -> None:
        super().__init__()
        self.taught = taught
        self.needs_own_demo = False
        self.fail_after: int | None = None

    def answer(self, call: FakeCall) -> Answer:
        if self.fail_after is not None and len(self.calls) > self.fail_after:
            raise KeyboardInterrupt  # what Ctrl-C or a killed job leaves
        message = call.inputs.get("message", "")
        tool = "weather" if "weather" in message else "alarm"
        if call.role == "intent":
            shown = (
                call.prompt.count(message) > 1
                if self.needs_own_demo
                else demos_shown(call.prompt) > 0
            )
            right = shown == self.taught
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


def compile_(
    model: str, tmp_path: Path, rows: list[dict[str, Any]] | None = None, **options: Any
) -> Any:
    test = options.pop("test", None)
    settings = CompileSettings(**{"minutes": None, "folds": 3, **options})
    return freyr_dspy.compile(
        baseline(model), rows or examples(), test=test, settings=settings,
        project=Settings(project_dir=tmp_path),
    )  # fmt: skip


def test_a_model_that_needs_demos_gets_a_pool_and_the_guard_lets_it_through(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    outcome = compile_(fake(True), tmp_path)
    assert outcome.baseline.accuracy == 0.0  # untaught: never a tool
    assert outcome.choice.passed and outcome.candidate.compiled
    assert outcome.shipped.stage == "demos" and outcome.shipped.accuracy == 1.0
    assert (outcome.choice.wins, outcome.choice.losses) == (18, 0)
    assert "chose trial" in outcome.choice.sentence()
    # what ships is the program that was scored: the same object, its pool of every row
    pools = [p.demo_pool for p in outcome.program.predictors() if getattr(p, "demo_pool", None)]
    assert pools and all(pool["select"] == "contrastive" for pool in pools)
    assert all(len(pool["demos"]) == 18 for pool in pools if pool["field"] == "message")
    assert all("tools" not in d for pool in pools for d in pool["demos"])  # tools stay out
    result = outcome.program(message="How is the weather in Oslo?", calls_only=True).result
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}]
    # the artifact records how it was chosen, and loads with its pool
    path = freyr_dspy.save(outcome.program, tmp_path / "out.json", outcome.meta)
    meta, _ = freyr_dspy.artifacts.read_artifact(path)
    assert meta.search is not None and meta.search["shipped"] == outcome.choice.shipped
    assert meta.scores.before == 0.0 and meta.scores.after == 1.0
    loaded = freyr_dspy.load(path, toolbox=BOX)
    again = loaded(message="Wake me at 06:30.", calls_only=True).result
    assert [c.tool for c in again.calls] == ["alarm"]


def test_the_shipped_pool_is_scored_leave_one_out(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    # One row of a kind nobody else asks: its own demo would teach it, the others cannot
    # (the fake plans right only from a demo that answers the very same request).
    model = fake(True)
    ENGINES[model].needs_own_demo = True
    outcome = compile_(model, tmp_path)
    assert outcome.baseline.accuracy == 0.0
    demos = [t for t in outcome.trials if t.stage == "demos"]
    assert demos and all(t.accuracy == 0.0 for t in demos)  # no row saw its own demo
    assert not outcome.choice.passed and not outcome.candidate.compiled


def test_candidates_worse_than_the_baseline_are_never_shipped(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    outcome = compile_(fake(False), tmp_path)
    assert outcome.baseline.accuracy == 1.0
    assert all(t.accuracy < 1.0 for t in outcome.trials if t.candidate.compiled)
    assert outcome.choice.shipped == outcome.choice.baseline == 0
    assert not outcome.candidate.compiled and not any(p.demos for p in outcome.program.predictors())
    assert outcome.choice.sentence().startswith("kept the baseline")


def test_held_out_rows_are_scored_before_and_after_and_never_chosen_on(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    held = [
        {"message": "How is the weather in Turin?", "calls": [
            {"name": "weather", "arguments": {"city": "Turin"}}]},
    ]  # fmt: skip
    outcome = compile_(fake(True), tmp_path, test=held)
    assert outcome.held_out is not None
    assert (outcome.held_out.before, outcome.held_out.after) == (0.0, 1.0)
    line = "held-out rows: 0.000 before (baseline) -> 1.000 after (1 rows; won 1, lost 0)"
    assert line in outcome.lines()
    assert outcome.n_rows == 18  # the held-out row is not among the rows chosen on
    # every row of every candidate, and the held-out rows, are written down
    records = [
        json.loads(line) for line in (tmp_path / outcome.records_path).read_text().splitlines()
    ]
    trials = {r["trial"] for r in records if "trial" in r}
    assert trials == {t.number for t in outcome.trials}
    assert sum(1 for r in records if r.get("held_out")) == 2
    assert all({"row", "kind", "toolbox", "success", "plan", "verdicts"} <= set(r) for r in records)


def test_a_rerun_resumes_the_study_and_pays_for_no_row_twice(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    model = fake(True)
    first = compile_(model, tmp_path)
    engine = ENGINES[model]
    calls = len(engine.calls)
    second = compile_(model, tmp_path)
    assert second.study_name == first.study_name
    assert [t.number for t in second.trials] == [t.number for t in first.trials]
    assert second.choice == first.choice
    assert len(engine.calls) == calls  # nothing left to run: not one model call


def test_an_interrupted_compile_resumes_from_the_rows_it_scored(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    whole = fake(True)
    compile_(whole, tmp_path / "whole")
    fresh = len(ENGINES[whole].calls)  # what a compile from nothing calls
    model = fake(True)
    engine = ENGINES[model]
    engine.fail_after = fresh * 3 // 4  # the process dies in the demos stage
    with pytest.raises(KeyboardInterrupt):
        compile_(model, tmp_path)
    engine.fail_after = None
    made = len(engine.calls)
    outcome = compile_(model, tmp_path)
    assert outcome.choice.passed
    resumed = len(engine.calls) - made
    assert resumed <= fresh - made + 2  # only the rows not scored before (and the one cut)


def test_progress_tells_every_row_with_the_best_so_far(
    fake: Callable[[bool], str], tmp_path: Path
) -> None:
    from freyr_dspy.cli._compile_progress import compile_progress, progress_line

    events: list[Any] = []
    settings = CompileSettings(minutes=None, folds=3)
    freyr_dspy.compile(
        baseline(fake(True)), examples(), settings=settings,
        project=Settings(project_dir=tmp_path), progress=events.append,
    )  # fmt: skip
    assert [e.done for e in events if e.done] == sorted(e.done for e in events if e.done)
    assert events[17].stage == "baseline" and events[17].best is None  # baseline still going
    last = events[-1]
    assert last.done == last.planned and last.best == 1.0
    line = progress_line(events[20], 90.0)
    assert line.startswith("compile: ") and "best 0.000 (trial 0)" in line and "left" in line
    written: list[str] = []
    with compile_progress(tty=False, write=written.append) as show:
        for event in events:
            show(event)
    assert len(written) == len({e.trial for e in events})  # a line per new candidate


def test_folds_are_stratified_by_toolbox_and_kind_seeded_and_interleaved() -> None:
    rows = [
        TrainingRow(id=f"{box}{kind}{i}", kind=kind, toolbox=box, gold=())
        for box in ("x", "y")
        for kind in ("a", "b")
        for i in range(3)
    ]
    folds = make_folds(rows, 3, seed=1)
    assert folds == make_folds(rows, 3, seed=1)
    for fold in range(3):
        members = folds.rows_of(fold)
        assert sorted(m[:2] for m in members) == ["xa", "xb", "ya", "yb"]
        assert set(folds.train_ids(fold)).isdisjoint(members)
    assert {row[:2] for row in folds.order[:6]} >= {"xa", "ya"}


def _rows(kinds: dict[str, int], boxes: int = 1) -> list[TrainingRow]:
    return [
        TrainingRow(id=f"{kind}{i}", kind=kind, toolbox=f"box{i % boxes}", gold=())
        for kind, n in kinds.items()
        for i in range(n)
    ]


def test_the_guard_tests_the_choosing_not_the_chosen() -> None:
    rows = _rows({"c": 20})
    folds = make_folds(rows, 4)
    ids = folds.order
    base = Scored(0, dict.fromkeys(ids, 0.0), tokens=10, seconds=1)
    # a candidate that wins where it was looked at by chance: right on 5 rows, which
    # another candidate of the same worth gets right elsewhere
    lucky = Scored(1, {r: float(i < 5) for i, r in enumerate(ids)}, tokens=10, seconds=1)
    other = Scored(2, {r: float(5 <= i < 10) for i, r in enumerate(ids)}, tokens=10, seconds=1)
    choice = choose([base, lucky, other], 0, rows, folds)
    assert choice.candidate in (1, 2)
    assert choice.wins + choice.losses <= 10
    good = Scored(3, dict.fromkeys(ids, 1.0), tokens=10, seconds=1)
    assert choose([base, good], 0, rows, folds).passed


def test_the_guard_never_ships_a_gain_paid_for_by_one_kind() -> None:
    rows = _rows({"one-call": 40, "near-miss": 10})
    folds = make_folds(rows, 5)
    # the baseline gets every near miss right and no one-call row; the candidate gains 30
    # one-call rows and loses 3 near misses: far ahead in all, but that kind pays
    base = Scored(0, {r.id: float(r.kind == "near-miss") for r in rows}, tokens=10, seconds=1)
    greedy = {r.id: float(r.kind == "one-call" and int(r.id[8:]) < 30) for r in rows}
    greedy |= {f"near-miss{i}": float(i >= 3) for i in range(10)}
    choice = choose([base, Scored(1, greedy, tokens=10, seconds=1)], 0, rows, folds)
    assert choice.candidate == 1 and choice.total.net == 27
    assert not choice.passed and choice.shipped == 0
    assert "near-miss lost 3 rows net (at most 2)" in choice.sentence()
    # losing 2 of 10 is within the margin
    greedy |= {"near-miss2": 1.0}
    assert choose([base, Scored(1, greedy, tokens=10, seconds=1)], 0, rows, folds).passed


def test_the_guard_never_ships_a_gain_of_one_toolbox() -> None:
    rows = _rows({"one-call": 60}, boxes=3)
    folds = make_folds(rows, 5)
    base = Scored(0, {r.id: float(r.toolbox != "box0") for r in rows}, tokens=10, seconds=1)
    # right on all of box0 (20 rows won), wrong on 3 of box1 and 3 of box2
    lopsided = {r.id: 1.0 for r in rows}
    lopsided |= {r.id: 0.0 for r in rows if r.toolbox != "box0" and int(r.id[8:]) < 9}
    choice = choose([base, Scored(1, lopsided, tokens=10, seconds=1)], 0, rows, folds)
    assert choice.total.net > 10 and not choice.passed
    assert "no loss in only 1 of 3 toolboxes" in choice.sentence()


def test_the_guard_needs_a_practical_margin() -> None:
    rows = _rows({"one-call": 100})
    folds = make_folds(rows, 5)
    base = Scored(0, {r.id: 0.0 for r in rows}, tokens=10, seconds=1)
    two = Scored(1, {r.id: float(r.id in ("one-call0", "one-call1")) for r in rows}, 10, 1)
    choice = choose([base, two], 0, rows, folds)
    assert not choice.passed and "needs 3 rows more won than lost, got 2" in choice.sentence()


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
