from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.benchmark import EvalOptions, step_example
from freyr_dspy.benchmarks import get_benchmark
from freyr_dspy.benchmarks.callnavi._benchmark import CALLNAVI_BENCHMARK
from freyr_dspy.benchmarks.callnavi._data import callnavi_dir, load_domain
from freyr_dspy.benchmarks.callnavi._domain import CallNaviProgram
from freyr_dspy.benchmarks.callnavi._trainset import benchmark_overlap, load_trainset
from freyr_dspy.compiling import BenchmarkMetric
from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.evaluation import StepRecord, run_episode
from freyr_dspy.testing import FakeCall, FunctionLM
from tests.support.callnavi_fakes import FIXTURES, Responder, make_program
from tests.support.paths import PROJECT_DIR

Install = Callable[[Responder], FunctionLM]
PROJECT = PROJECT_DIR


def options(**extra: Any) -> EvalOptions:
    limit = extra.pop("limit", None)
    return EvalOptions(data_dir=FIXTURES, limit=limit, extra=extra)


def test_registered_with_its_strategies() -> None:
    benchmark = get_benchmark("callnavi")
    assert benchmark is CALLNAVI_BENCHMARK
    assert benchmark.strategies[:3] == ("single", "two_step", "backward")


def test_episodes_cover_every_domain_found_by_default() -> None:
    episodes = CALLNAVI_BENCHMARK.episodes(options())
    assert Counter(e.case for e in episodes) == {"pets": 7, "phones": 2, "schema": 1}
    first = episodes[0].steps[0]
    assert first.id == "pet01" and first.message == "List the pets of owner OW-1."
    assert first.start_state == {"domain": "pets", "data_dir": str(FIXTURES), "plan": None}
    assert first.expected["calls"] == [{"tool": "getPetList", "arguments": {"ownerID": "OW-1"}}]
    flags = {e.id: e.steps[0].expected for e in episodes}
    assert flags["pet06"]["unanswerable"] and not flags["pet01"]["unanswerable"]


def test_limit_is_per_domain_and_round_robin_over_difficulties() -> None:
    episodes = CALLNAVI_BENCHMARK.episodes(options(domains="pets", limit=3))
    assert [e.id for e in episodes] == ["pet01", "pet04", "pet05"]  # easy, medium, hard
    both = CALLNAVI_BENCHMARK.episodes(options(domains=["pets", "phones"], limit=1))
    assert [e.id for e in both] == ["pet01", "tel001"]


def test_difficulty_filter_and_unknown_names() -> None:
    hard = CALLNAVI_BENCHMARK.episodes(options(difficulty=["hard"]))
    assert [e.id for e in hard] == ["pet05", "pet06"]
    with pytest.raises(ConfigError, match=r"unknown CallNavi domain 'pet'.*Did you mean 'pets'"):
        CALLNAVI_BENCHMARK.episodes(options(domains="pet"))
    with pytest.raises(ConfigError, match="unknown difficulty 'hardest'"):
        CALLNAVI_BENCHMARK.episodes(options(difficulty="hardest"))


def test_make_program_follows_the_state_domain() -> None:
    program = CALLNAVI_BENCHMARK.make_program("two_step", options(catalog="names"))
    assert isinstance(program, CallNaviProgram)
    assert program.data_dir == str(FIXTURES)
    assert program.strategy.config() == {"catalog": "names"}
    assert program.role_names == ("router", "call_parameters")
    gated = CALLNAVI_BENCHMARK.make_program("gated", options(catalog="names", inner="nlt"))
    assert gated.strategy.config() == {"inner": {"name": "nlt"}}  # the catalog level is not gated's


def _single_from_table(table: dict[str, Any]) -> Responder:
    def answer(call: FakeCall) -> Any:
        for key, value in table.items():
            if key in call.inputs.get("question", ""):
                return value(call) if callable(value) else value
        return None

    return answer


def test_scores_carry_every_metric_and_diagnostics(fake_lm: Install) -> None:
    fake_lm(
        _single_from_table(
            {
                "OW-1": {"API": ["getPetList"], "parameters": [{"ownerID": "OW-1"}]},
                "salon open": {"API": ["getOpeningHours"], "parameters": [{}]},
                "Ana Silva": {
                    "API": ["getOwnerID", "registerPet"],
                    "parameters": [
                        {"ownerName": "Ana Silva"},
                        {"ownerID": "X", "petDetails": {"name": "Miso"}},
                    ],
                },
                "Bo Chen": {"API": ["getPetList"], "parameters": [{"ownerID": "$$$"}]},
            }
        )
    )
    episodes = {e.id: e for e in CALLNAVI_BENCHMARK.episodes(options(domains="pets"))}
    program = make_program("single")
    records = {
        i: run_episode(CALLNAVI_BENCHMARK, program, episodes[i])[0]
        for i in ("pet01", "pet02", "pet05", "pet06")
    }
    ok = records["pet01"]
    assert ok.success == 1.0 and set(ok.metrics.values()) == {1.0}
    assert ok.diagnostics["produced"] == {
        "API": ["getPetList"],
        "parameters": [{"ownerID": "OW-1"}],
    }
    assert ok.diagnostics["difficulty"] == "easy" and ok.diagnostics["domain"] == "pets"
    zero = records["pet02"]  # gold [] vs predicted [{}]: the original fails, strict passes
    assert zero.metrics["ast"] == 0.0 and zero.metrics["ast_strict"] == 1.0
    assert zero.failure_kind == "parameters"
    wrong_args = records["pet05"]
    assert wrong_args.metrics["routing"] == 1.0 and wrong_args.metrics["ast"] == 0.0
    assert wrong_args.failure_kind == "parameters"
    assert records["pet06"].failure_kind == "unanswerable"


@pytest.mark.parametrize("strategy", ["native", "freyr"])
def test_generic_strategies_are_scored_on_the_calls_they_made(
    fake_lm: Install, strategy: str
) -> None:
    """``native`` (the structured baseline) and ``freyr`` run over the question's catalog."""

    def answer(call: FakeCall) -> Any:
        if call.role == "native":
            if call.tools:
                assert "getPetList" in call.tools  # the domain's APIs
                return {"tool_calls": [{"name": "getPetList", "args": {"ownerID": "OW-1"}}]}
            return {"response": "Listed."}
        return {
            "intent": {"intents": ["getPetList"]},
            "parameters": {"arguments": {"ownerID": "OW-1"}},
            "summary": {"reply": "Listed."},
        }.get(call.role)

    fake_lm(answer)
    episode = CALLNAVI_BENCHMARK.episodes(options(domains="pets", limit=1))[0]
    (record,) = run_episode(CALLNAVI_BENCHMARK, make_program(strategy), episode)
    assert record.success == 1.0, record.diagnostics
    assert record.diagnostics["produced"] == {
        "API": ["getPetList"],
        "parameters": [{"ownerID": "OW-1"}],
    }


def test_failure_kinds_for_routing_and_context(fake_lm: Install) -> None:
    def answer(call: FakeCall) -> Any:
        if "OW-1" in call.inputs["question"]:
            return {"API": ["getOwnerID"], "parameters": [{"ownerName": "OW-1"}]}
        raise ValueError("Requested tokens (5000) exceed context window of 4096")

    fake_lm(answer)
    episodes = {e.id: e for e in CALLNAVI_BENCHMARK.episodes(options(domains="pets"))}
    program = make_program("single")
    routed = run_episode(CALLNAVI_BENCHMARK, program, episodes["pet01"])[0]
    assert routed.failure_kind == "routing"
    overflow = run_episode(CALLNAVI_BENCHMARK, program, episodes["pet04"])[0]
    assert overflow.failure_kind == "context" and overflow.metrics["syntax"] == 0.0


def _record(episode: str, run: int, difficulty: str, ast: float, output: str) -> StepRecord:
    return StepRecord(
        benchmark="callnavi",
        strategy="single",
        run=run,
        case="pets",
        episode=episode,
        step=episode,
        success=ast,
        metrics={"ast": ast, "routing": 1.0, "ast_strict": ast},
        diagnostics={"difficulty": difficulty, "output": output},
        input_tokens=100 + run,
        lm_calls=1,
    )


def test_summary_per_difficulty_macro_domain_and_stability() -> None:
    records = [
        _record("p1", 0, "easy", 1.0, "A"),
        _record("p1", 1, "easy", 1.0, "A"),
        _record("p2", 0, "hard", 0.0, "B"),
        _record("p2", 1, "hard", 1.0, "C"),
    ]
    summary = CALLNAVI_BENCHMARK.summarize(records)["single"]
    assert summary["ast"] == pytest.approx({"easy": 1.0, "hard": 0.5, "all": 0.75, "macro": 0.75})
    assert summary["by_domain"]["pets"]["questions"] == 2
    assert summary["by_domain"]["pets"]["tokens_in_per_question"] == pytest.approx(100.5)
    assert summary["stability"]["election"] == pytest.approx(0.5)  # p1 stable, p2 a 1/1 tie
    assert summary["stability"]["levenshtein"] == pytest.approx(0.5)
    assert summary["ast_answerable"] == pytest.approx(0.75)
    records[2].diagnostics["flags"] = ["ground_truth_api_not_in_domain_api_list"]
    assert CALLNAVI_BENCHMARK.summarize(records)["single"]["ast_answerable"] == pytest.approx(1.0)
    one_run = CALLNAVI_BENCHMARK.summarize(records[::2])["single"]
    assert "stability" not in one_run


def _write_trainset(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


GOOD_ROW = {
    "id": "t1",
    "domain": "pets",
    "question": "Pets of owner OW-42?",
    "difficulty": "easy",
    "ground_truth": {"API": ["getPetList"], "parameters": [{"ownerID": "OW-42"}]},
}


def test_train_episodes_read_the_project_trainset(tmp_path: Path) -> None:
    _write_trainset(tmp_path / "callnavi.jsonl", [GOOD_ROW])
    [episode] = CALLNAVI_BENCHMARK.train_episodes(tmp_path, options())
    step = episode.steps[0]
    assert step.start_state is not None and step.start_state["domain"] == "pets"
    assert step.expected["calls"] == [{"tool": "getPetList", "arguments": {"ownerID": "OW-42"}}]


def test_trainset_rows_may_name_apis_and_parameters_by_position(tmp_path: Path) -> None:
    names = load_domain(FIXTURES, "pets").data_names
    assert names[:2] == ["getOwnerID", "getPetList"]  # APIs first, then parameters
    owner_id = names.index("ownerID")
    assert owner_id > names.index("ownerName") > 1
    row = {
        **GOOD_ROW,
        "ground_truth": {
            "API": ["{{name:1}}"],
            "parameters": [{f"{{{{name:{owner_id}}}}}": "OW-42"}],
        },
    }
    path = _write_trainset(tmp_path / "t.jsonl", [row])
    [question] = load_trainset(path, FIXTURES)
    assert question.gold == GOOD_ROW["ground_truth"]


@pytest.mark.parametrize(
    ("folder", "change", "message"),
    [
        (None, {}, ":1: the row names APIs by position"),
        (FIXTURES, {"domain": "cars"}, ":1: unknown domain 'cars'"),
        (FIXTURES, {"id": "{{name:999}}"}, ":1: {{name:999}} refers past the catalog"),
    ],
)
def test_trainset_references_fail_with_path_and_line(
    tmp_path: Path, folder: Path | None, change: dict[str, Any], message: str
) -> None:
    row = {**GOOD_ROW, "ground_truth": {"API": ["{{name:1}}"], "parameters": [{}]}, **change}
    path = _write_trainset(tmp_path / "t.jsonl", [row])
    with pytest.raises(DataError, match=re.escape(f"t.jsonl{message}")):
        load_trainset(path, folder)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"difficulty": "trivial"}, ":2: difficulty: Input should be 'easy'"),
        ({"ground_truth": {"API": ["getPetList"], "parameters": []}}, ":2: ground_truth: Value"),
        ({"ground_truth": {"API": ["getPetLists"], "parameters": [{}]}}, ":2: pets has no API"),
        ({"domain": "cars"}, ":2: unknown domain 'cars'"),
        ({"difficulty": "medium"}, ":2: row: Value error, a medium question has several"),
        ({"id": "t1"}, ":2: duplicate id 't1'"),
        (
            {"ground_truth": {"API": ["getPetList"], "parameters": [{"owner": "x"}]}},
            ":2: getPetList has no parameter",
        ),
    ],
)
def test_trainset_rows_are_validated_with_path_and_line(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = _write_trainset(tmp_path / "t.jsonl", [GOOD_ROW, {**GOOD_ROW, "id": "t2", **change}])
    with pytest.raises(DataError, match=f"t.jsonl{message}"):
        load_trainset(path, FIXTURES)


def test_oracle_replays_give_demos_for_every_callnavi_strategy(tmp_path: Path) -> None:
    from freyr_dspy.compiling._gold import gold_demos

    row = {
        "id": "t9",
        "domain": "pets",
        "question": "I am Ana Silva, show my pets.",
        "difficulty": "hard",
        "ground_truth": {
            "API": ["getOwnerID", "getPetList"],
            "parameters": [{"ownerName": "Ana Silva"}, {"ownerID": "$$$"}],
        },
    }
    _write_trainset(tmp_path / "callnavi.jsonl", [row])
    [episode] = CALLNAVI_BENCHMARK.train_episodes(tmp_path, options())
    examples = [step_example(episode.steps[0])]
    for strategy in ("single", "two_step", "backward"):
        program = CALLNAVI_BENCHMARK.make_program(strategy, options())
        metric = BenchmarkMetric(CALLNAVI_BENCHMARK, program.coerce_state)
        demos = gold_demos(program, examples, metric)
        assert all(demos.values()), (strategy, {k: len(v) for k, v in demos.items()})


def test_project_trainset_is_valid_covers_every_shared_domain_and_is_disjoint(
    data_dir: Path,
) -> None:
    folder = callnavi_dir(data_dir)
    questions = load_trainset(PROJECT / "trainsets" / "callnavi.jsonl", folder)
    per_domain = Counter(q.domain for q in questions)
    for domain in ("bank", "shopping", "logistics", "aviation", "hospital", "gov", "hr"):
        assert per_domain[domain] >= 10, domain
        assert {q.difficulty for q in questions if q.domain == domain} == {"easy", "medium", "hard"}
    assert benchmark_overlap(questions, folder) == []


def test_freyr_eval_runs_callnavi_end_to_end(fake_lm: Install, capsys: Any) -> None:
    from freyr_dspy.cli import main

    fake_lm(
        lambda call: {
            "single": {"API": ["getPetList"], "parameters": [{"ownerID": "OW-1"}]},
            "router": {"apis": ["getPetList"]},
            "call_parameters": {"arguments": {"ownerID": "OW-1"}},
        }.get(call.role)
    )
    code = main(
        [
            "eval",
            "--benchmark",
            "callnavi",
            "--data",
            str(FIXTURES),
            "--domains",
            "pets",
            "--difficulty",
            "easy",
            "--limit",
            "1",
            "--strategy",
            "single,two_step",
            "--runs",
            "2",
            "--model",
            "fake/callnavi",
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    summary = data["benchmarks"]["callnavi"]["summary"]
    assert summary["single"]["ast"]["easy"] == 1.0
    assert summary["two_step"]["stability"]["election"] == 1.0
    assert summary["two_step"]["by_domain"]["pets"]["lm_calls_per_question"] == 2.0
