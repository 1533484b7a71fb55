"""The ``llmaker`` benchmark: episodes, scoring, failure kinds, programs run on fakes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest

from freyr_dspy.benchmarks import EvalOptions, Step, get_benchmark
from freyr_dspy.benchmarks.llmaker._benchmark import LLMAKER_BENCHMARK, failure_kind
from freyr_dspy.benchmarks.llmaker._levels import load_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.domains import get_domain
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import to_prediction
from freyr_dspy.schemas import CallRecord, Failure, Outcome, Result, RoleModel
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake
from tests.support.llmaker_helpers import STATS

SHADOW = {
    "room_name": "Starting Room",
    "name": "Menacing Shadow",
    "description": "A menacing shadow",
    "hp": 50,
    "cell_index": -1,
    **STATS,
}


def options(data_dir: Path, **extra: Any) -> EvalOptions:
    return EvalOptions(data_dir=data_dir, extra=extra)


@pytest.fixture
def llmaker_dir(llmaker_data: Path) -> Path:
    return llmaker_data.parent


def test_registered_domain_and_benchmark() -> None:
    assert get_benchmark("llmaker") is LLMAKER_BENCHMARK
    domain = get_domain("llmaker")
    assert list(domain.renderers) == ["original", "rich"]
    assert domain.renderer()(domain.initial_state()).startswith("Rooms:")


def test_bootstrap_episodes(llmaker_dir: Path) -> None:
    episodes = LLMAKER_BENCHMARK.episodes(options(llmaker_dir))
    assert len(episodes) == 50 and all(len(e.steps) == 1 for e in episodes)
    first = episodes[0].steps[0]
    assert (episodes[0].id, episodes[0].case, first.message) == (
        "T1.1",
        "T1",
        "Make a room in a swamp",
    )
    assert load_level(first.start_state) == Level()
    limited = LLMAKER_BENCHMARK.episodes(EvalOptions(data_dir=llmaker_dir, limit=3))
    assert [e.id for e in limited] == ["T1.1", "T1.2", "T1.3"]


def test_iterative_episodes_carry_the_state(llmaker_dir: Path) -> None:
    episodes = LLMAKER_BENCHMARK.episodes(EvalOptions(data_dir=llmaker_dir, mode="iterative"))
    assert [(e.id, len(e.steps)) for e in episodes] == [
        ("T1", 7),
        ("T2", 9),
        ("T3", 10),
        ("T4", 11),
        ("T5", 13),
    ]
    assert all(e.stop_on_failure for e in episodes)
    assert episodes[1].steps[0].start_state is not None
    assert all(s.start_state is None for s in episodes[1].steps[1:])


def test_missing_data_is_a_clear_error(tmp_path: Path) -> None:
    from freyr_dspy.errors import ConfigError

    with pytest.raises(ConfigError, match="pass --data DIR"):
        LLMAKER_BENCHMARK.episodes(options(tmp_path))


def test_make_program_reads_the_options() -> None:
    program = LLMAKER_BENCHMARK.make_program(
        "freyr",
        EvalOptions(
            data_dir=Path("."), extra={"state_view": "rich", "max_hp": 20, "max_retries": 1}
        ),
    )
    assert program.state_view == "rich" and program.max_retries == 1
    hp = next(p for p in program.toolbox.get("add_enemy").parameters if p.name == "hp")
    assert hp.description == "health points, 1 to 20."


def _step(case: str = "T2", number: int = 2) -> Step:
    return Step(id=f"{case}.{number}", message="m", expected={"case": case, "step": number})


def _result(
    state: Level,
    calls: list[CallRecord] | None = None,
    failure: Failure | None = None,
    intents: list[str] | None = None,
) -> dspy.Prediction:
    return to_prediction(
        Result(
            reply="",
            strategy="freyr",
            intents=intents or [],
            calls=calls or [],
            state=state,
            failure=failure,
        )
    )


def _start(llmaker_dir: Path, step_id: str) -> Level:
    episode = next(e for e in LLMAKER_BENCHMARK.episodes(options(llmaker_dir)) if e.id == step_id)
    return load_level(episode.steps[0].start_state)


def test_score_success_and_diagnostics(llmaker_dir: Path) -> None:
    before = _start(llmaker_dir, "T2.2")
    toolbox = get_domain("llmaker").make_toolbox()
    after = toolbox.execute("add_enemy", SHADOW, before).state
    call = CallRecord(tool="add_enemy", arguments=SHADOW, outcome=Outcome(ok=True, message="ok"))
    score = LLMAKER_BENCHMARK.score(_step(), before, _result(after, [call], intents=["add_enemy"]))
    assert score.success == 1.0 and score.failure_kind is None
    assert score.metrics == {"domain": 1.0, "design": 1.0, "intents": 1.0}
    assert (
        score.diagnostics["expected_intents"]
        == "exactly 1 of ['add_enemy'], including ['add_enemy']"
    )
    assert score.diagnostics["produced_intents"] == ["add_enemy"]
    assert score.diagnostics["calls"] == ["add_enemy:ok"]


def test_score_failure_kinds(llmaker_dir: Path) -> None:
    before = _start(llmaker_dir, "T2.2")
    toolbox = get_domain("llmaker").make_toolbox()
    weak = toolbox.execute("add_enemy", {**SHADOW, "hp": 5}, before).state
    assert LLMAKER_BENCHMARK.score(_step(), before, _result(weak)).failure_kind == "design"
    failed = CallRecord(tool="add_enemy", arguments={}, outcome=Outcome(ok=False, message="bad"))
    abandoned = failed.model_copy(update={"gave_up": True})
    kinds = {
        "retries": _result(
            before,
            [failed],
            failure=Failure(kind="retries", detail="retries exhausted for add_enemy"),
        ),
        "gave_up": _result(
            before, [abandoned], failure=Failure(kind="gave_up", detail="gave up on add_enemy")
        ),
        "model": _result(
            before, failure=Failure(kind="model", detail="intent model failed: timeout")
        ),
        "parse": _result(
            before,
            failure=Failure(kind="unknown_tool", detail="intent named no known tool: add_enemies"),
        ),
        "domain": _result(before),
    }
    for kind, prediction in kinds.items():
        score = LLMAKER_BENCHMARK.score(_step(), before, prediction)
        assert (score.success, score.failure_kind) == (0.0, kind)


def test_failure_kind_is_none_on_success() -> None:
    assert failure_kind(True, True, Result(reply="", strategy="freyr")) is None


# --------------------------------------------------------------------------- programs on fakes


def _agent(call: FakeCall) -> dict[str, Any] | None:
    """A correct FREYR agent for step T2.2 (and a native one)."""
    if call.role == "intent":
        return {"intents": ["add_enemy"]}
    if call.role == "parameters":
        hp = 500000 if call.inputs["feedback"] == "none" else 50  # first attempt out of range
        return {"arguments": {**SHADOW, "hp": hp}}
    if call.role == "summary":
        return {"reply": "Added the shadow."}
    if call.role == "native" and call.tools:
        return {"tool_calls": [{"name": "add_enemy", "args": SHADOW}]}
    if call.role == "native":
        return {"response": "Added the shadow."}
    return None


@pytest.fixture
def agent() -> Iterator[FunctionLM]:
    engine = FunctionLM(_agent)
    register_fake("llmaker-agent", engine)
    yield engine
    unregister_fake("llmaker-agent")


@pytest.mark.parametrize("strategy", ["freyr", "native"])
def test_program_passes_a_step_on_a_fake(
    llmaker_dir: Path, agent: FunctionLM, strategy: str
) -> None:
    program = LLMAKER_BENCHMARK.make_program(strategy, options(llmaker_dir))
    program.apply_assignment(
        {role: RoleModel(model="fake/llmaker-agent") for role in program.role_names}
    )
    episode = next(e for e in LLMAKER_BENCHMARK.episodes(options(llmaker_dir)) if e.id == "T2.2")
    (record,) = run_episode(LLMAKER_BENCHMARK, program, episode)
    assert record.success == 1.0, record.diagnostics
    assert record.input_tokens > 0 and record.lm_calls >= 2
    if strategy == "freyr":
        assert record.calls[0]["attempts"] == 2  # the range error was fed back and fixed
        assert "hp must be between 1 and 1000" in record.calls[0]["errors"][0]


def test_iterative_episode_stops_at_the_first_failure(llmaker_dir: Path) -> None:
    def lazy(call: FakeCall) -> dict[str, Any] | None:
        return (
            {"intents": ["conversation"]}
            if call.role == "intent"
            else ({"reply": "Hello"} if call.role == "chat" else None)
        )

    register_fake("llmaker-lazy", FunctionLM(lazy))
    try:
        program = LLMAKER_BENCHMARK.make_program("freyr", options(llmaker_dir))
        program.apply_assignment(
            {r: RoleModel(model="fake/llmaker-lazy") for r in program.role_names}
        )
        episode = LLMAKER_BENCHMARK.episodes(EvalOptions(data_dir=llmaker_dir, mode="iterative"))[0]
        records = run_episode(LLMAKER_BENCHMARK, program, episode)
    finally:
        unregister_fake("llmaker-lazy")
    assert [(r.step, r.success, r.failure_kind) for r in records] == [("T1.1", 0.0, "domain")]
