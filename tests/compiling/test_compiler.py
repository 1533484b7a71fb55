from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from freyr_dspy.artifacts import program_state
from freyr_dspy.benchmark import Episode, EvalOptions, Step, step_example
from freyr_dspy.benchmarks._todo import TodoBenchmark
from freyr_dspy.compiling._compiler import (
    compile_program,
    load_trainset,
    split_trainset,
    trainset_sha256,
)
from freyr_dspy.compiling._gold import select_demos, shorten
from freyr_dspy.compiling._optimizers import OPTIMIZER_NAMES, OptimizerConfig
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.settings import Settings
from freyr_dspy.testing import register_fake, unregister_fake
from tests.support.compile_fakes import MAGIC, OPTIONS, SkilledLM, project, skilled_program


@pytest.fixture
def skilled() -> Iterator[tuple[FreyrProgram, SkilledLM]]:
    yield skilled_program()
    unregister_fake("skilled")


def _compile(program: FreyrProgram, settings: Settings, name: str, **config: object):
    return compile_program(
        program,
        TodoBenchmark(),
        OptimizerConfig(name=name, **config),
        settings=settings,
        options=OPTIONS,
    )


@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_every_optimizer_improves_a_model_that_needs_teaching(
    name: str, skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, _ = skilled
    report = _compile(program, project(tmp_path), name)
    assert report.before is not None
    assert report.before.accuracy < 0.5  # untaught, the fake only gets the chat row right
    assert report.after.accuracy > report.before.accuracy
    assert report.n_train + report.n_dev == 10
    # every role plays on its original model again (optimizers that reset_copy drop LMs)
    for _, predictor in report.program.named_predictors():
        assert predictor.lm is not None and predictor.lm.model == "fake/skilled"
    assert report.program.assignment == program.assignment
    # the input program is left as it was
    assert all(not p.demos for p in program.predictors())
    taught = [
        p for p in report.program.predictors() if p.demos or MAGIC in p.signature.instructions
    ]
    assert taught


def test_labeled_demos_are_gold_per_role(
    skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, engine = skilled
    report = _compile(program, project(tmp_path), "labeled", max_demos=3)
    gold = engine.gold
    intent_demos = report.program.role("intent").predict.demos
    assert len(intent_demos) == 3
    for demo in intent_demos:
        assert demo.intents == [c["tool"] for c in gold[demo.message]] or demo.intents == [
            "conversation"
        ]
    for demo in report.program.role("parameters").predict.demos:
        assert demo.arguments in [c["arguments"] for c in gold[demo.message]]
    # no demo without a gold answer: chat has no gold replies in the fixture
    assert report.program.role("chat").predict.demos == []
    # varied: the intent demos do not all teach the same tool
    assert len({tuple(d.intents) for d in intent_demos}) == 3


def test_misses_takes_its_demos_from_the_requests_the_model_gets_wrong(tmp_path: Path) -> None:
    from freyr_dspy.benchmarks._todo import load_rows, row_step
    from tests.support.compile_fakes import FIXTURE, todo_gold

    known = ("Add a task", "Mark", "Complete", "Hey")
    engine = SkilledLM(todo_gold(), knows=known)
    register_fake("partly_skilled", engine)
    program = TodoBenchmark().make_program("freyr", OPTIONS)
    program.apply_assignment(
        {r: RoleModel(model="fake/partly_skilled") for r in program.role_names}
    )
    examples = [step_example(row_step(r)) for r in load_rows(FIXTURE)]
    try:
        report = compile_program(
            program,
            TodoBenchmark(),
            OptimizerConfig(name="misses", max_demos=5, demo_roles=("intent",)),
            settings=project(tmp_path),
            options=OPTIONS,
            trainset=examples,
            devset=examples[:1],
            evaluate_before=False,
        )
    finally:
        unregister_fake("partly_skilled")
    messages = [demo.message for demo in report.program.role("intent").predict.demos]
    # the four requests the model misses untaught come first, one known request tops them up
    missed = {"Remove the task wash car.", "List my open tasks.", "Convert 100 minutes to hours."}
    missed |= {"Convert 61 minutes to hours."}
    assert set(messages[:4]) == missed
    assert len(messages) == 5 and messages[4].startswith(known)


def test_a_two_tool_gold_step_replays_through_confirm(tmp_path: Path) -> None:
    from freyr_dspy.benchmark import step_example
    from freyr_dspy.benchmarks._todo import TodoBenchmark
    from freyr_dspy.compiling._gold import gold_demos
    from freyr_dspy.compiling._metrics import BenchmarkMetric

    row = {
        "id": "two",
        "message": "Add a task called milk, then list my tasks.",
        "calls": [
            {"tool": "add_task", "arguments": {"title": "milk"}},
            {"tool": "list_tasks", "arguments": {}},
        ],
    }
    (tmp_path / "todo.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    benchmark = TodoBenchmark()
    [episode] = benchmark.train_episodes(tmp_path, OPTIONS)
    program = benchmark.make_program("freyr", OPTIONS)
    metric = BenchmarkMetric(benchmark, program.coerce_state)
    demos = gold_demos(program, [step_example(episode.steps[0])], metric)
    [confirm] = demos["strategy.confirm.predict"]
    assert confirm.asked == {"add_task": True, "list_tasks": True}
    # the replay went on past the check: both calls left their parameters demo
    assert len(demos["strategy.parameters.predict"]) == 2


def test_demo_roles_and_maxlen_limit_the_demos(
    skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, _ = skilled
    report = _compile(
        program, project(tmp_path), "labeled", demo_roles=("intent",), demo_field_maxlen=30
    )
    assert report.program.role("intent").predict.demos
    assert all(not p.demos for p in report.program.role("parameters").predictors())
    for demo in report.program.role("intent").predict.demos:
        assert len(demo.tools) <= 32 and demo.tools.endswith(" …")
        assert isinstance(demo.intents, list)  # outputs are never cut


def test_demo_omit_drops_the_catalog_from_demos_and_the_prompt_still_runs(
    skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, engine = skilled
    report = _compile(program, project(tmp_path), "labeled", demo_omit=("tools",))
    demos = report.program.role("intent").predict.demos
    assert demos and all("tools" not in d and d.message and d.intents for d in demos)
    # the request itself still shows the catalog; the demos say they left a field out
    message = "Add a task called fixture alpha."
    result = report.program(message=message, state={"tasks": []}).result
    assert [c.tool for c in result.calls] == ["add_task"]
    [intent_call] = [
        c for c in engine.calls if c.role == "intent" and c.inputs["message"] == message
    ][-1:]
    assert "list_tasks" in intent_call.inputs["tools"] and "not supplied" in intent_call.prompt


def test_compile_is_deterministic_for_a_seed(
    skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, _ = skilled
    settings = project(tmp_path)
    first = _compile(program, settings, "bootstrap_rs", budget=2, seed=3)
    second = _compile(program, settings, "bootstrap_rs", budget=2, seed=3)
    assert program_state(first.program) == program_state(second.program)
    assert first.after == second.after or first.after.accuracy == second.after.accuracy


def test_simba_refuses_mixed_models(
    skilled: tuple[FreyrProgram, SkilledLM], tmp_path: Path
) -> None:
    program, _ = skilled
    program.apply_assignment(
        {"summary": RoleModel(model="fake/skilled", sampling=Sampling(temperature=0.5))}
    )
    with pytest.raises(ConfigError, match="same model"):
        _compile(program, project(tmp_path), "simba")


def test_program_without_models_is_a_config_error(tmp_path: Path) -> None:
    program = TodoBenchmark().make_program("freyr", OPTIONS)
    with pytest.raises(ConfigError, match="without a model"):
        _compile(program, project(tmp_path), "labeled")


def test_split_is_seeded_and_keeps_both_sides() -> None:
    examples = [step_example(Step(id=str(i), message=f"m{i}", start_state={})) for i in range(10)]
    train, dev = split_trainset(examples, dev_fraction=0.3, seed=1)
    assert (len(train), len(dev)) == (7, 3)
    assert {e.message for e in train} | {e.message for e in dev} == {f"m{i}" for i in range(10)}
    assert split_trainset(examples, seed=1) == (train, dev)
    assert split_trainset(examples, seed=2) != (train, dev)
    assert len(split_trainset(examples[:2], dev_fraction=0.9)[0]) == 1
    with pytest.raises(ConfigError):
        split_trainset(examples[:1])


def test_trainset_hash_follows_the_data(tmp_path: Path) -> None:
    examples = load_trainset(TodoBenchmark(), project(tmp_path), OPTIONS)
    digest = trainset_sha256(examples)
    assert digest == trainset_sha256(load_trainset(TodoBenchmark(), project(tmp_path), OPTIONS))
    changed = [step_example(Step(id="x", message="other", start_state={})), *examples[1:]]
    assert trainset_sha256(changed) != digest


def test_select_demos_prefers_short_and_varied() -> None:
    demos = [
        dspy.Example(message="a" * 50, intents=["add_task"]),
        dspy.Example(message="a", intents=["add_task"]),
        dspy.Example(message="b" * 30, intents=["remove_task"]),
    ]
    chosen = select_demos(demos, 2, outputs=["intents"])
    assert sorted(d.message for d in chosen) == ["a", "b" * 30]
    cut = select_demos(demos, 3, outputs=["intents"], maxlen=20)
    assert all(len(d.message) <= 22 for d in cut)
    assert shorten(dspy.Example(message="x" * 40, reply="y" * 40), 20, keep=["reply"]).reply == (
        "y" * 40
    )


@pytest.mark.embedded
def test_compile_save_load_run_on_the_embedded_default(tmp_path: Path) -> None:
    """The real path end to end: SmolLM2-135M, gold demos, artifact, reload, one request."""
    from freyr_dspy.artifacts import load, save
    from freyr_dspy.benchmarks._todo import load_rows, row_step
    from freyr_dspy.compiling._job import report_meta
    from tests.support.compile_fakes import FIXTURE

    settings = project(tmp_path)
    examples = [step_example(row_step(r)) for r in load_rows(FIXTURE)]
    program = TodoBenchmark().make_program("freyr", OPTIONS)
    short = Sampling(temperature=0.0, seed=1, max_tokens=48)
    program.apply_assignment(
        {r: RoleModel(model="embedded/smollm2-135m", sampling=short) for r in program.role_names}
    )
    report = compile_program(
        program,
        TodoBenchmark(),
        OptimizerConfig(name="labeled", max_demos=1),
        settings=settings,
        options=OPTIONS,
        trainset=examples[:6],
        devset=examples[6:7],
        evaluate_before=False,
    )
    assert report.after.steps == 1 and report.after.tokens > 0
    assert len(report.program.role("intent").predict.demos) == 1
    path = save(
        report.program,
        settings.compiled_dir / "todo.json",
        report_meta(report, benchmark="todo", options=OPTIONS),
    )
    loaded = load(path, settings=settings)
    assert program_state(loaded) == program_state(report.program)
    result = loaded(message="Add a task called fixture delta.").result
    assert result.usage["intent"].lm_calls >= 1 and result.usage["intent"].input_tokens > 0


class _TwoStepBenchmark(TodoBenchmark):
    """Training episodes of two steps; the second may lack its own start state."""

    def __init__(self, second_state: object) -> None:
        self.second_state = second_state

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        first = Step(id="a", message="add milk")  # no start_state: the initial state
        second = Step(id="b", message="list", start_state=self.second_state)
        return [Episode(id="e", case="train", steps=(first, second))]


def test_a_later_step_must_carry_its_own_start_state(tmp_path: Path) -> None:
    settings = project(tmp_path)
    examples = load_trainset(_TwoStepBenchmark({"tasks": []}), settings, OPTIONS)
    assert [e.step.id for e in examples] == ["a", "b"]
    assert examples[0].state is None  # the domain's initial state
    with pytest.raises(ConfigError, match=r"training step 'b' .* has no start_state"):
        load_trainset(_TwoStepBenchmark(None), settings, OPTIONS)
