"""``FreyrProgram`` with strategy ``freyr`` (Algorithm 1) on strict fakes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import dspy
import pytest

from freyr_dspy.domains._example import Task, TodoState
from freyr_dspy.errors import ConfigError, FakeLMError, UnknownRoleError
from freyr_dspy.program import FreyrProgram, render_conversation
from freyr_dspy.schemas import Failure, Result, RoleModel
from freyr_dspy.strategies import Freyr, Gated, Nlt, StrategyModule, make_strategy, strategy_with
from freyr_dspy.testing import Answer, FakeCall, FakeEngine, FunctionLM, ScriptedLM, register_fake
from freyr_dspy.testing import unregister_fake as _unregister
from tests.support.presets import SMALL_PRESET

Build = Callable[..., FreyrProgram]


@pytest.fixture
def build() -> Iterator[Build]:
    """Build a todo program whose roles use the given fakes (one fake for all, or per role)."""
    names: list[str] = []

    def make(fakes: FakeEngine | dict[str, FakeEngine], **kwargs: Any) -> FreyrProgram:
        program = FreyrProgram("todo", **kwargs)
        per_role = fakes if isinstance(fakes, dict) else dict.fromkeys(program.role_names, fakes)
        assignment = {}
        for role, engine in per_role.items():
            name = f"prog_{id(engine)}"
            register_fake(name, engine)
            names.append(name)
            assignment[role] = RoleModel(model=f"fake/{name}")
        return program.apply_assignment(assignment)

    yield make
    for name in names:
        _unregister(name)


def answers(**by_role: Callable[[FakeCall], Answer | None] | Answer) -> FunctionLM:
    """A FunctionLM answering each role with a constant or a function of the call."""

    def answer(call: FakeCall) -> Answer | None:
        value = by_role.get(call.role)
        return value(call) if callable(value) else value

    return FunctionLM(answer)


SUMMARY = {"reply": "All done."}


def test_happy_path_intents_parameters_execute_summary(build: Build) -> None:
    engine = ScriptedLM(
        {
            "intent": {"*": {"intents": ["add_task"]}},
            "parameters": {"*": {"arguments": {"title": "buy milk", "priority": "2"}}},
            "summary": {"*": SUMMARY},
        }
    )
    prediction = build(engine)(message="Add buy milk, priority 2")
    result: Result = prediction.result
    assert result.reply == prediction.reply == "All done."
    assert result.strategy == "freyr"
    assert result.intents == ["add_task"]
    [call] = result.calls
    # the arguments as the model wrote them; the tool got them coerced
    assert (call.tool, call.arguments, call.attempts, call.errors) == (
        "add_task",
        {"title": "buy milk", "priority": "2"},
        1,
        [],
    )
    assert call.outcome.ok
    assert result.state == TodoState(tasks=[Task(title="buy milk", priority=2)])
    assert result.failure is None
    assert engine.roles_called() == ["intent", "parameters", "summary"]
    # the summary sees the outcome and the new state
    summary_call = engine.calls[-1]
    assert (
        "add_task(title='buy milk', priority='2'): Added task 'buy milk'"
        in summary_call.inputs["outcomes"]
    )
    assert "buy milk (priority 2)" in summary_call.inputs["state"]
    # the intent role sees the catalog with the conversation pseudo-tool last
    tools = engine.calls[0].inputs["tools"]
    assert tools.startswith("- add_task: Add a new task") and "\n- conversation:" in tools
    assert tools.splitlines()[-1].startswith("- conversation:")


def test_error_is_fed_back_and_the_retry_succeeds(build: Build) -> None:
    def parameters(call: FakeCall) -> Answer:
        if call.inputs["feedback"] == "none":
            return {"arguments": {"title": "milk", "priority": 9}}
        return {"arguments": {"title": "milk", "priority": 5}}

    engine = answers(intent={"intents": ["add_task"]}, parameters=parameters, summary=SUMMARY)
    result = build(engine)(message="add milk, priority 9 or else 5").result
    [call] = result.calls
    assert call.outcome.ok
    assert call.attempts == 2
    assert call.errors == ["add_task failed: priority must be between 1 and 5, got 9"]
    assert call.arguments == {"title": "milk", "priority": 5}
    feedbacks = [c.inputs["feedback"] for c in engine.calls if c.role == "parameters"]
    assert feedbacks[0] == "none"
    assert feedbacks[1].startswith(
        "Calling add_task with {'title': 'milk', 'priority': 9} failed: "
        "add_task failed: priority must be between 1 and 5, got 9\n"
    )
    assert '{"give_up": "<why>"}' in feedbacks[1]
    assert result.usage["parameters"].lm_calls == 2
    assert result.failure is None


@pytest.mark.parametrize("max_retries", [0, 2])
def test_retries_are_bounded_and_a_failed_call_loses_nothing(
    build: Build, max_retries: int
) -> None:
    engine = answers(
        intent={"intents": ["add_task"]},
        parameters={"arguments": {"titel": "milk"}},
        summary=SUMMARY,
    )
    start = TodoState(tasks=[Task(title="bread")])
    result = build(engine, max_retries=max_retries)(message="add milk", state=start).result
    [call] = result.calls
    assert not call.outcome.ok
    assert call.attempts == len(call.errors) == 1 + max_retries
    assert "unexpected argument 'titel'" in call.errors[0]
    assert "missing required argument 'title'" in call.errors[0]
    assert result.state == start
    assert result.failure == Failure(kind="retries", detail="retries exhausted for add_task")
    assert engine.roles_called() == ["intent", *["parameters"] * (1 + max_retries), "summary"]
    assert "ERROR: add_task: unexpected argument" in engine.calls[-1].inputs["outcomes"]


def test_several_intents_run_in_order_and_repeats_are_kept(build: Build) -> None:
    engine = answers(
        intent={"intents": ["add_task", "Add Task", "list_tasks", "nonsense"]},
        confirm={"asked": {"add_task": True, "list_tasks": True}},
        parameters=lambda call: (
            {"arguments": {"calls": [{"title": "a"}, {"title": "b"}]}}
            if "add_task" in call.inputs["tool"]
            else {"arguments": {}}
        ),
        summary=SUMMARY,
    )
    result = build(engine)(message="add a and b then list").result
    assert [c.tool for c in result.calls] == ["add_task", "add_task", "list_tasks"]
    assert result.calls[2].outcome.message == "a (p1); b (p1)"
    assert [t.title for t in result.state.tasks] == ["a", "b"]
    # both add_task calls were written by one parameters call, which saw only that tool
    [both] = [c.inputs["tool"] for c in engine.calls if c.role == "parameters"][:1]
    assert "list_tasks" not in both and "at most 2" in both


def test_a_call_that_exhausts_its_retries_stops_the_later_intents(build: Build) -> None:
    engine = answers(
        intent={"intents": ["add_task", "list_tasks", "add_task"]},
        confirm={"asked": {"add_task": True, "list_tasks": True}},
        parameters={"arguments": {"titel": "milk"}},
        summary=SUMMARY,
    )
    result = build(engine, max_retries=1)(message="add milk then list").result
    assert [c.tool for c in result.calls] == ["add_task"]
    assert result.intents == ["add_task", "list_tasks", "add_task"]
    # add_task's second entry was asked for with its first (the fake wrote one call)
    assert result.failure == Failure(
        kind="retries", detail="retries exhausted for add_task; not attempted: list_tasks"
    )
    assert engine.roles_called() == ["intent", "confirm", "parameters", "parameters", "summary"]


@pytest.mark.parametrize(
    "give_up", [{"arguments": {"give_up": "no such room"}}, {"arguments": "OpError"}]
)
def test_giving_up_after_an_error_costs_no_more_attempts_and_later_calls_run(
    build: Build, give_up: Answer
) -> None:
    def parameters(call: FakeCall) -> Answer:
        if "list_tasks" in call.inputs["tool"]:
            return {"arguments": {}}
        return {"arguments": {"titel": "milk"}} if call.inputs["feedback"] == "none" else give_up

    engine = answers(
        intent={"intents": ["add_task", "list_tasks"]},
        confirm={"asked": {"add_task": True, "list_tasks": True}},
        parameters=parameters,
        summary=SUMMARY,
    )
    start = TodoState(tasks=[Task(title="bread")])
    result = build(engine, max_retries=3)(message="add milk then list", state=start).result
    abandoned, listed = result.calls
    assert abandoned.gave_up and not abandoned.outcome.ok
    assert abandoned.attempts == len(abandoned.errors) == 1
    assert abandoned.arguments == {"titel": "milk"}
    assert abandoned.outcome.message.startswith("not possible: ")
    assert "unexpected argument 'titel'" in abandoned.outcome.message
    assert listed.tool == "list_tasks" and listed.outcome.ok
    assert result.state == start
    assert result.failure == Failure(kind="gave_up", detail="gave up on add_task")
    assert engine.roles_called() == ["intent", "confirm", *["parameters"] * 3, "summary"]


def test_confirm_drops_the_planned_tools_the_message_does_not_ask_for(build: Build) -> None:
    engine = answers(
        intent={"intents": ["add_task", "list_tasks", "add_task"]},
        confirm={"asked": {"add_task": True, "list_tasks": False}},
        parameters={"arguments": {"calls": [{"title": "milk"}, {"title": "x"}]}},
        summary=SUMMARY,
    )
    result = build(engine, max_retries=0)(message="add milk and add x").result
    assert result.intents == ["add_task", "add_task"]
    assert [(c.tool, c.arguments, c.outcome.ok) for c in result.calls] == [
        ("add_task", {"title": "milk"}, True),
        ("add_task", {"title": "x"}, True),
    ]
    [check] = [c for c in engine.calls if c.role == "confirm"]
    # only the planned tools, each once, with what it does; the catalog is not sent again
    assert check.inputs["tools"].splitlines() == [
        "- add_task: Add a new task to the to-do list.",
        "- list_tasks: List the tasks, optionally only the open or the done ones.",
    ]


def test_a_plan_that_copies_the_catalog_is_asked_again_for_one_tool(build: Build) -> None:
    plans = iter([["add_task", "complete_task", "list_tasks", "conversation"], ["add_task"]])
    engine = answers(
        intent=lambda call: {"intents": next(plans)},
        parameters={"arguments": {"title": "milk"}},
        summary=SUMMARY,
    )
    result = build(engine, max_retries=0)(message="add milk").result
    assert result.intents == ["add_task"]
    assert [(c.tool, c.outcome.ok) for c in result.calls] == [("add_task", True)]
    assert engine.roles_called() == ["intent", "intent", "parameters", "summary"]


def test_only_most_of_the_catalog_in_catalog_order_counts_as_a_copy() -> None:
    from freyr_dspy.strategies._freyr import copies_catalog

    catalog = ["a", "b", "c", "d", "e"]
    assert copies_catalog(["a", "b", "c", "conversation"], catalog)
    assert copies_catalog(["b", "c", "d", "e", "e"], catalog)
    assert not copies_catalog(["a", "b"], catalog)  # two tools: a real two-step plan
    assert not copies_catalog(["c", "a", "b"], catalog)  # an order of its own: a choice
    assert not copies_catalog(["a", "b", "c"], [*catalog, "f", "g"])  # under half the catalog


def test_confirm_without_a_model_of_its_own_uses_the_intent_roles(build: Build) -> None:
    engine = answers(
        intent={"intents": ["add_task", "list_tasks"]},
        confirm={"asked": {"add_task": True, "list_tasks": False}},
        parameters={"arguments": {"title": "milk"}},
        summary=SUMMARY,
    )
    older_code = dict.fromkeys(("intent", "parameters", "summary", "chat"), engine)
    program = build(older_code, max_retries=0)
    result = program(message="add milk").result
    assert result.intents == ["add_task"]
    assert engine.roles_called() == ["intent", "confirm", "parameters", "summary"]
    assert program.assignment["confirm"] == program.assignment["intent"]  # saved as it ran


def test_a_plan_of_one_tool_is_not_confirmed_and_a_rejected_plan_chats(build: Build) -> None:
    single = answers(
        intent={"intents": ["add_task", "add_task", "conversation"]},
        parameters={"arguments": {"title": "a"}},
        summary=SUMMARY,
    )
    build(single, max_retries=0)(message="add a")
    assert "confirm" not in single.roles_called()
    rejected = answers(
        intent={"intents": ["add_task", "list_tasks"]},
        confirm={"asked": {"add_task": False, "list_tasks": False}},
        chat={"reply": "Hello!"},
    )
    result = build(rejected)(message="hello").result
    assert (result.intents, result.calls, result.reply) == ([], [], "Hello!")
    assert rejected.roles_called() == ["intent", "confirm", "chat"]


def test_confirm_verdicts_are_read_from_loose_text() -> None:
    from freyr_dspy.roles._confirm import PlanConfirmer, confirmed

    clean = PlanConfirmer().clean
    asked = clean({"asked": "- add_task: yes\n- list_tasks: No.\n- other: maybe"})["asked"]
    assert asked == {"add_task": True, "list_tasks": False}
    # a tool without a clear verdict is kept: the check only ever removes what it rejects
    assert confirmed(["add_task", "list_tasks", "other"], asked) == ["add_task", "other"]


def test_give_up_on_the_first_attempt_is_an_ordinary_bad_call(build: Build) -> None:
    """The opt-out is offered only after an error; before it, it is just wrong arguments."""
    engine = answers(
        intent={"intents": ["add_task"]},
        parameters={"arguments": {"give_up": "lazy"}},
        summary=SUMMARY,
    )
    result = build(engine, max_retries=0)(message="add milk").result
    [call] = result.calls
    assert not call.gave_up and "unexpected argument 'give_up'" in call.errors[0]
    assert result.failure == Failure(kind="retries", detail="retries exhausted for add_task")


def test_tool_without_parameters_skips_the_parameters_role(build: Build) -> None:
    def ping() -> str:
        """Check that the service answers."""
        return "pong"

    from freyr_dspy.tools import Tool, Toolbox

    engine = answers(intent={"intents": ["ping"]}, summary=SUMMARY)
    program = build(engine, toolbox=Toolbox([Tool.from_function(ping)]))
    result = program(message="ping").result
    assert result.calls[0].outcome.message == "pong"
    assert engine.roles_called() == ["intent", "summary"]


def test_conversation_intent_goes_to_chat_with_the_history(build: Build) -> None:
    engine = answers(intent={"intents": ["conversation"]}, chat={"reply": "Hi!"})
    turns = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hey"}]
    result = build(engine)(message="how are you?", conversation=turns).result
    assert result.reply == "Hi!"
    assert result.calls == [] and result.failure is None
    assert engine.roles_called() == ["intent", "chat"]
    assert engine.calls[1].inputs["conversation"] == "user: hello\nassistant: hey"
    assert set(result.usage) == {"intent", "chat"}


def test_unknown_intents_fall_back_to_chat_and_are_reported(build: Build) -> None:
    engine = answers(intent={"intents": ["fly_to_moon"]}, chat={"reply": "I cannot do that."})
    result = build(engine)(message="fly me to the moon").result
    assert result.reply == "I cannot do that."
    assert result.failure == Failure(
        kind="unknown_tool", detail="intent named no known tool: fly_to_moon"
    )
    assert result.calls == []


def test_garbage_intent_text_is_still_read(build: Build) -> None:
    engine = ScriptedLM(
        {
            "intent": {"*": "Sure!! The tools you need:\n- ADD TASK\n"},
            "parameters": {"*": "```\n- title: 'milk'\n```"},
            "summary": {"*": "[[ ## reply ## ]]\nAdded."},
        }
    )
    result = build(engine)(message="add milk").result
    assert result.intents == ["add_task"]
    assert result.calls[0].arguments == {"title": "milk"}
    assert result.reply == "Added."


def test_each_role_uses_its_own_model(build: Build) -> None:
    intent_fake = ScriptedLM({"intent": {"*": {"intents": ["add_task"]}}})
    worker_fake = ScriptedLM(
        {
            "parameters": {"*": {"arguments": {"title": "milk"}}},
            "summary": {"*": SUMMARY},
            "chat": {"*": {"reply": "unused"}},
        }
    )
    program = build(
        {
            "intent": intent_fake,
            "parameters": worker_fake,
            "summary": worker_fake,
            "chat": worker_fake,
        }
    )
    program(message="add milk")
    assert intent_fake.roles_called() == ["intent"]
    assert worker_fake.roles_called() == ["parameters", "summary"]
    assert {c.model for c in intent_fake.calls} == {f"fake/prog_{id(intent_fake)}"}
    assert program.assignment["intent"].model != program.assignment["summary"].model


def test_usage_is_accounted_per_role(build: Build) -> None:
    def slow_parameters(call: FakeCall) -> Answer:
        time.sleep(0.02)
        return {"arguments": {"title": "milk"} if call.inputs["feedback"] != "none" else {}}

    engine = answers(intent={"intents": ["add_task"]}, parameters=slow_parameters, summary=SUMMARY)
    result = build(engine)(message="add milk").result
    assert list(result.usage) == ["intent", "parameters", "summary"]
    by_role: dict[str, list[FakeCall]] = {}
    for call in engine.calls:
        by_role.setdefault(call.role, []).append(call)
    for role, usage in result.usage.items():
        calls = by_role[role]
        assert usage.lm_calls == len(calls)
        assert usage.input_tokens == sum(len(c.prompt.split()) for c in calls)
        assert usage.output_tokens >= usage.lm_calls
        assert usage.seconds > 0
    assert result.usage["parameters"].lm_calls == 2
    assert result.usage["parameters"].seconds >= 0.04
    total = result.total_usage
    assert total.lm_calls == 4
    assert total.input_tokens == sum(u.input_tokens for u in result.usage.values())


@pytest.mark.parametrize(
    ("error", "kind"),
    [(TimeoutError("read timed out"), "timeout"), (ConnectionError("refused"), "model")],
)
def test_model_failure_keeps_the_calls_already_made(
    build: Build, error: Exception, kind: str
) -> None:
    def summary(call: FakeCall) -> Answer:
        raise error

    engine = answers(
        intent={"intents": ["add_task"]},
        parameters={"arguments": {"title": "milk"}},
        summary=summary,
    )
    result = build(engine)(message="add milk").result
    assert result.failure is not None and result.failure.kind == kind
    assert result.failure.model_failed
    assert result.failure.detail.startswith("summary model failed:")
    assert str(error) in result.failure.detail
    assert result.reply == ""
    assert result.intents == ["add_task"]  # the plan survives the failure
    assert [c.tool for c in result.calls] == ["add_task"] and result.calls[0].outcome.ok
    assert [t.title for t in result.state.tasks] == ["milk"]
    assert result.usage["summary"].lm_calls == 0
    assert result.usage["parameters"].lm_calls == 1


def test_model_failure_at_the_first_role(build: Build) -> None:
    def intent(call: FakeCall) -> Answer:
        raise TimeoutError("no answer in 30 s")

    result = build(answers(intent=intent))(message="add milk").result
    assert result.failure is not None and result.failure.kind == "timeout"
    assert result.failure.detail.startswith("intent model failed: [fake/prog_")
    assert result.failure.detail.endswith("] no answer in 30 s")
    assert result.calls == [] and result.state == TodoState()


def test_a_context_overflow_is_its_own_kind_of_model_failure(build: Build) -> None:
    from litellm.exceptions import ContextWindowExceededError

    def intent(call: FakeCall) -> Answer:
        raise ContextWindowExceededError("prompt too long", model="m", llm_provider="openai")

    failure = build(answers(intent=intent))(message="add milk").result.failure
    assert failure is not None and failure.kind == "context" and failure.model_failed
    assert failure.detail.startswith("intent model failed:")


def test_unscripted_fake_call_is_not_swallowed(build: Build) -> None:
    engine = ScriptedLM({"intent": {"*": {"intents": ["add_task"]}}})
    with pytest.raises(FakeLMError, match="unscripted call to role 'parameters'"):
        build(engine)(message="add milk")


def test_state_is_coerced_and_the_callers_object_is_untouched(build: Build) -> None:
    engine = answers(
        intent={"intents": ["complete_task"]},
        parameters={"arguments": {"title": "bread"}},
        summary=SUMMARY,
    )
    program = build(engine)
    from_json = program(message="done bread", state={"tasks": [{"title": "bread"}]}).result
    assert from_json.state.tasks[0].done is True
    original = TodoState(tasks=[Task(title="bread")])
    result = program(message="done bread", state=original).result
    assert result.state.tasks[0].done and not original.tasks[0].done


def test_chat_adapter_end_to_end(build: Build) -> None:
    engine = ScriptedLM(
        {
            "intent": {"*": {"intents": ["convert_minutes"]}},
            "parameters": {"*": {"arguments": {"minutes": "135"}}},
            "summary": {"*": SUMMARY},
        }
    )
    result = build(engine, adapter="chat")(message="how long is 135 minutes").result
    assert result.calls[0].outcome.message == "2 h 15 min"


def test_catalog_level_and_state_view_reach_the_prompts(build: Build) -> None:
    engine = answers(intent={"intents": ["conversation"]}, chat={"reply": "ok"})
    build(engine, catalog_level="full", state_view="text")(message="hi")
    inputs = engine.calls[0].inputs
    assert "- priority (integer, optional, default 1)" in inputs["tools"]
    assert inputs["state"] == "The to-do list is empty."


def test_missing_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="role 'intent' has no model"):
        FreyrProgram("todo")(message="hi")


def test_unknown_role_in_assignment() -> None:
    with pytest.raises(UnknownRoleError, match="Did you mean 'intent'"):
        FreyrProgram("todo").apply_assignment({"intnet": RoleModel(model="fake/rules")})


def test_roles_are_attributes_of_the_strategy_module_with_stable_predictor_names() -> None:
    program = FreyrProgram("todo")
    assert isinstance(program.strategy, Freyr)
    assert program.role_names == ("intent", "confirm", "parameters", "summary", "chat")
    assert [name for name, _ in program.named_predictors()] == [
        "strategy.intent.predict",
        "strategy.confirm.predict",
        "strategy.parameters.predict",
        "strategy.summary.predict",
        "strategy.chat.predict",
    ]
    assert program.role("intent") is program.strategy.intent  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("strategy", "roles"),
    [
        (Gated(), ("library", "intent", "parameters", "summary", "chat")),
        (Gated(inner=Nlt()), ("library", "tool_selection", "parameters", "summary", "chat")),
        (Gated(inner=Freyr()), ("library", "intent", "confirm", "parameters", "summary", "chat")),
    ],
)
def test_gated_holds_the_gate_and_exactly_its_inner_strategys_roles(
    strategy: Gated, roles: tuple[str, ...]
) -> None:
    program = FreyrProgram("todo", strategy=strategy)
    assert program.role_names == roles
    names = [name for name, _ in program.named_predictors()]
    assert names[0] == "strategy.library.predict"
    assert all(n.startswith("strategy.inner.") for n in names[1:])
    assert program.role("library") is strategy.library  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "strategy",
    [
        Freyr(),
        make_strategy("freyr", confirm=False),
        make_strategy("freyr", exclude_blamed=True),
        make_strategy("freyr", exclude_blamed=True, choose_listed=True),
        make_strategy(
            "freyr", calibrate=True, replan=True, exclude_blamed=True, choose_listed=True
        ),
        make_strategy("freyr", abstain=True),
        make_strategy("freyr", require_stated=True, split_calls=True),
        Nlt(respond=False),
        Gated(inner="nlt", respond=False),
    ],
)
def test_a_strategy_is_rebuilt_from_its_config(strategy: StrategyModule) -> None:
    rebuilt = make_strategy(strategy.name, **strategy.config())
    assert type(rebuilt) is type(strategy) and rebuilt.config() == strategy.config()
    assert rebuilt.role_names == strategy.role_names


def test_settings_a_strategy_does_not_take_are_an_error() -> None:
    with pytest.raises(ConfigError, match="strategy 'freyr' takes no setting 'respond'"):
        make_strategy("freyr", respond=False)
    with pytest.raises(ConfigError, match="gated: unknown inner strategy 'native'"):
        make_strategy("gated", inner="native")
    # Benchmark-wide settings go to the strategies that declare them, and to no other.
    assert strategy_with("freyr", {"respond": False, "inner": "nlt"}).config() == {}
    assert strategy_with("nlt", {"respond": False, "inner": "nlt"}).config() == {"respond": False}


def test_a_program_takes_a_strategy_label_with_switches() -> None:
    from freyr_dspy.strategies import default_strategy

    program = FreyrProgram("todo", strategy=default_strategy("embedded/qwen2.5-coder-0.5b"))
    assert program.strategy_name == "freyr"
    assert program.strategy.config() == SMALL_PRESET
    with pytest.raises(ConfigError, match="takes no setting 'respond'"):
        FreyrProgram("todo", strategy="freyr+respond")


def test_result_json_has_the_documented_keys(build: Build) -> None:
    engine = answers(intent={"intents": ["conversation"]}, chat={"reply": "ok"})
    data = build(engine)(message="hi").result.to_json_dict()
    assert {"reply", "calls", "state", "usage", "intents", "failure", "total_usage"} <= set(data)
    assert data["state"] == {"tasks": []}
    assert set(data["usage"]["chat"]) == {
        "lm_calls",
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "seconds",
        "parse_failures",
    }


def test_render_conversation() -> None:
    assert render_conversation("") == "(none)"
    assert render_conversation([]) == "(none)"
    assert render_conversation("  a: b ") == "a: b"
    assert render_conversation([{"content": "x"}]) == "user: x"


def test_fake_rules_agent_end_to_end() -> None:
    program = FreyrProgram("todo").apply_assignment(
        dict.fromkeys(("intent", "parameters", "summary", "chat"), RoleModel(model="fake/rules"))
    )
    result = program(message='Add a task called "buy milk" with priority=3').result
    assert result.calls[0].arguments == {"title": "buy milk", "priority": "3"}
    assert result.state.tasks[0].priority == 3
    assert result.reply.startswith("Done.")


def test_program_state_survives_save_and_load(tmp_path: Path) -> None:
    program = FreyrProgram("todo")
    demo = dspy.Example(
        conversation="(none)",
        message="hi",
        tools="- add_task",
        state="{}",
        intents=["conversation"],
    ).with_inputs("conversation", "message", "tools", "state")
    program.role("intent").predict.demos = [demo]
    path = tmp_path / "program.json"
    program.save(str(path))
    loaded = FreyrProgram("todo")
    loaded.load(str(path))
    assert loaded.dump_state() == program.dump_state()
    assert loaded.role("intent").predict.demos[0]["intents"] == ["conversation"]


@pytest.mark.parametrize(
    ("name", "plain"), [("json", dspy.JSONAdapter), ("chat", dspy.ChatAdapter)]
)
def test_memoised_adapters_format_exactly_like_dspy(name: str, plain: type) -> None:
    from freyr_dspy.prompting import make_adapter
    from freyr_dspy.roles import IntentSignature

    adapter = make_adapter(name)
    assert isinstance(adapter, plain)
    inputs = {"conversation": "(none)", "message": "hi", "tools": "- a", "state": "{}"}
    expected = plain().format(IntentSignature, [], inputs)
    assert adapter.format(IntentSignature, [], inputs) == expected
    assert make_adapter(name).format(IntentSignature, [], inputs) == expected  # from the cache
    changed = IntentSignature.with_instructions("Only say conversation.")
    assert "Only say conversation." in make_adapter(name).format_system_message(changed)


def test_answers_the_adapter_cannot_parse_are_counted_per_role(build: Build) -> None:
    engine = answers(
        intent="I think add_task is the one",  # not JSON: the tolerant parser reads it
        parameters={"arguments": {"title": "milk"}},
        summary=SUMMARY,
    )
    result = build(engine)(message="Add a task called milk").result
    assert result.intents == ["add_task"]
    assert result.usage["intent"].parse_failures == 1
    assert result.usage["parameters"].parse_failures == 0
    assert result.total_usage.parse_failures == 1


def replanning_engine(second_plan: list[str]) -> FunctionLM:
    """The first plan's tool fails whatever its arguments; after the failure is shown, the
    intent role plans ``second_plan``."""

    def intent(call: FakeCall) -> Answer:
        failed_before = "every attempt failed" in call.inputs["conversation"]
        return {"intents": second_plan if failed_before else ["complete_task"]}

    return answers(intent=intent, parameters={"arguments": {"title": "milk"}}, summary=SUMMARY)


def test_replan_carries_out_a_new_plan_after_the_first_call_fails_every_retry(
    build: Build,
) -> None:
    engine = replanning_engine(["add_task"])
    program = build(engine, strategy=make_strategy("freyr", replan=True), max_retries=1)
    result = program(message="put milk on my list").result
    assert [(c.tool, c.outcome.ok) for c in result.calls] == [
        ("complete_task", False),
        ("add_task", True),
    ]
    assert [t.title for t in result.state.tasks] == ["milk"]
    assert result.intents == ["add_task"] and result.failure is None
    assert engine.roles_called() == [
        *["intent", "parameters", "parameters"],
        *["intent", "parameters", "summary"],
    ]
    first_prompt, replan_prompt = [c for c in engine.calls if c.role == "intent"]
    # the failed tool is left out of the second plan's catalog, and only of that one
    assert "complete_task" in first_prompt.inputs["tools"]
    assert "complete_task" not in replan_prompt.inputs["tools"]
    assert "add_task" in replan_prompt.inputs["tools"]
    # the first plan asked for a tool, so the second is not offered `conversation`
    assert "conversation" in first_prompt.inputs["tools"]
    assert "conversation" not in replan_prompt.inputs["tools"]
    assert replan_prompt.inputs["conversation"] == (
        "assistant: I tried complete_task, and every attempt failed (last: complete_task "
        "failed: no task titled 'milk'; existing tasks: none). complete_task may be the wrong "
        "tool for this request."
    )
    # the summary is told about the failed attempt too
    assert "ERROR: complete_task" in engine.calls[-1].inputs["outcomes"]


def test_the_second_plans_contract_names_only_the_tools_left(build: Build) -> None:
    plain = replanning_engine(["add_task"])
    engine = FunctionLM(plain.answer, structured_output=True)
    build(engine, strategy=make_strategy("freyr", replan=True), max_retries=1)(
        message="put milk on my list"
    )
    first, second = [c for c in engine.calls if c.role == "intent"]
    formats = [c.config.response_format for c in (first, second)]
    schemas = [f.get("json_schema", f)["schema"] for f in formats]
    first_names, second_names = [s["properties"]["intents"]["items"]["enum"] for s in schemas]
    assert {"complete_task", "conversation"} <= set(first_names)
    assert second_names == [n for n in first_names if n not in ("complete_task", "conversation")]


@pytest.mark.parametrize("second_plan", [["complete_task"], ["conversation"]])
def test_replan_that_names_the_withheld_tool_or_asks_none_keeps_the_first_failure(
    build: Build, second_plan: list[str]
) -> None:
    engine = replanning_engine(second_plan)
    program = build(engine, strategy=make_strategy("freyr", replan=True), max_retries=1)
    result = program(message="put milk on my list").result
    assert [c.tool for c in result.calls] == ["complete_task"]
    assert result.intents == ["complete_task"]
    assert result.failure == Failure(kind="retries", detail="retries exhausted for complete_task")
    assert engine.roles_called() == ["intent", "parameters", "parameters", "intent", "summary"]


def test_a_failed_call_to_the_only_tool_is_not_planned_again(build: Build) -> None:
    def ping(host: str) -> str:
        """Check that a host answers.

        Args:
            host: the host to reach.
        """
        raise ConnectionError(f"{host} does not answer")

    from freyr_dspy.tools import Tool, Toolbox

    engine = answers(
        intent={"intents": ["ping"]}, parameters={"arguments": {"host": "a"}}, summary=SUMMARY
    )
    program = build(
        engine,
        strategy=make_strategy("freyr", replan=True),
        toolbox=Toolbox([Tool.from_function(ping)]),
        max_retries=0,
    )
    result = program(message="ping a").result
    # with the failed tool withheld nothing would be left to plan with: no second intent call
    assert engine.roles_called() == ["intent", "parameters", "summary"]
    assert result.failure is not None and result.failure.kind == "retries"


def test_without_replan_or_after_a_first_call_that_worked_the_plan_is_not_asked_again(
    build: Build,
) -> None:
    engine = replanning_engine(["add_task"])
    result = build(engine, max_retries=1)(message="put milk on my list").result
    assert [c.tool for c in result.calls] == ["complete_task"]
    assert engine.roles_called().count("intent") == 1
    # a later call's failure does not replan: the first call has changed the state
    later = answers(
        intent={"intents": ["add_task", "complete_task"]},
        confirm={"asked": {"add_task": True, "complete_task": True}},
        parameters=lambda call: {
            "arguments": {"title": "milk" if "add_task" in call.inputs["tool"] else "bread"}
        },
        summary=SUMMARY,
    )
    program = build(later, strategy=make_strategy("freyr", replan=True), max_retries=1)
    result = program(message="add milk, tick off bread").result
    assert [(c.tool, c.outcome.ok) for c in result.calls] == [
        ("add_task", True),
        ("complete_task", False),
    ]
    assert later.roles_called().count("intent") == 1
    assert result.failure == Failure(kind="retries", detail="retries exhausted for complete_task")


def test_replan_is_a_setting_of_the_strategy() -> None:
    assert make_strategy("freyr", replan=True).config() == {"replan": True}
    assert make_strategy("freyr", replan=True, calibrate=True).config() == {
        "calibrate": True,
        "replan": True,
    }
    assert Freyr().config() == {}


def test_the_replan_note_follows_the_earlier_turns() -> None:
    from freyr_dspy.strategies._freyr import replan_note

    note = replan_note("user: hi\nassistant: hello", "add_task", "add_task failed: bad title")
    assert note.splitlines() == [
        "user: hi",
        "assistant: hello",
        "assistant: I tried add_task, and every attempt failed (last: add_task failed: bad "
        "title). add_task may be the wrong tool for this request.",
    ]
    assert replan_note("(none)", "t", "e").startswith("assistant: I tried t,")


def move_to(room: str, side: Literal["north", "south", "east"]) -> str:
    """Walk into a room.

    Args:
        room: the room to walk into.
        side: which side of it to enter by.
    """
    if not room:
        raise ValueError("room should be provided (it is empty)")
    if side == "north":
        raise ValueError(f"the {side!r} door of {room} is locked")
    return f"in {room}"


def blamed_retries_engine() -> FunctionLM:
    """Writes an empty room, then the locked side, then a good call: three attempts."""
    attempts = iter([("", "east"), ("Hall", "north"), ("Hall", "east")])

    def parameters(call: FakeCall) -> Answer:
        room, side = next(attempts)
        return {"arguments": {"room": room, "side": side}}

    plain = answers(intent={"intents": ["move_to"]}, parameters=parameters, summary=SUMMARY)
    return FunctionLM(plain.answer, structured_output=True)


@pytest.mark.parametrize("exclude_blamed", [False, True])
def test_a_retry_cannot_write_the_value_its_error_blamed(
    build: Build, exclude_blamed: bool
) -> None:
    from freyr_dspy.tools import Tool, Toolbox

    engine = blamed_retries_engine()
    program = build(
        engine,
        strategy=make_strategy("freyr", exclude_blamed=exclude_blamed),
        toolbox=Toolbox([Tool.from_function(move_to)]),
    )
    [call] = program(message="go to the hall").result.calls
    assert call.outcome.ok and call.attempts == 3
    asked = [c for c in engine.calls if c.role == "parameters"]
    formats = [c.config.response_format for c in asked]
    schemas = [f.get("json_schema", f)["schema"] for f in formats]
    rooms = [_arguments_schema(s)["properties"]["room"] for s in schemas]
    sides = [_arguments_schema(s)["properties"]["side"]["enum"] for s in schemas]
    feedback = asked[2].inputs["feedback"]
    if not exclude_blamed:
        assert [r.get("minLength") for r in rooms] == [None, None, None]
        assert sides[2] == ["north", "south", "east"]
        assert "with {'room': 'Hall', 'side': 'north'}" in feedback
        return
    # the empty room is excluded from the second attempt on, the locked side from the third
    assert [r.get("minLength") for r in rooms] == [None, 1, 1]
    assert sides == [["north", "south", "east"]] * 2 + [["south", "east"]]
    assert "with {'room': 'Hall'} failed:" in feedback  # the blamed side is not shown again
    assert "write a different value for side" in feedback
    assert "write a different value for room" in asked[1].inputs["feedback"]


def open_door(room: str) -> str:
    """Open the door of a room.

    Args:
        room: the room whose door to open.
    """
    if room not in ("Hall", "Cellar"):
        raise ValueError(f"room {room!r} is not a room here; rooms: Hall, Cellar.")
    return f"opened {room}"


@pytest.mark.parametrize("choose_listed", [False, True])
def test_a_retry_is_offered_the_values_its_error_listed(build: Build, choose_listed: bool) -> None:
    from freyr_dspy.tools import Tool, Toolbox

    written = iter(["Hal", "Cellar"])
    engine = FunctionLM(
        answers(
            intent={"intents": ["open_door"]},
            parameters=lambda call: {"arguments": {"room": next(written)}},
            summary=SUMMARY,
        ).answer,
        structured_output=True,
    )
    program = build(
        engine,
        strategy=make_strategy("freyr", choose_listed=choose_listed),
        toolbox=Toolbox([Tool.from_function(open_door)]),
    )
    [call] = program(message="open the hall").result.calls
    assert call.outcome.ok and call.attempts == 2
    asked = [c for c in engine.calls if c.role == "parameters"]
    formats = [c.config.response_format for c in asked]
    schemas = [_arguments_schema(f.get("json_schema", f)["schema"]) for f in formats]
    rooms = [schema["properties"]["room"] for schema in schemas]
    feedback = asked[1].inputs["feedback"]
    if not choose_listed:
        assert "enum" not in rooms[1] and "one of" not in feedback
        return
    assert "enum" not in rooms[0] and rooms[1]["enum"] == ["Hall", "Cellar"]
    assert "room is one of: Hall, Cellar." in feedback


def _arguments_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments' object schema, out of the give-up ``anyOf`` of a retry's contract."""
    arguments = schema["properties"]["arguments"]
    return arguments["anyOf"][0] if "anyOf" in arguments else arguments


def test_warm_asks_the_catalog_and_each_tool_spec_once_and_changes_no_state(build: Build) -> None:
    engine = answers(intent={"intents": ["add_task"]}, parameters={"arguments": {"title": "x"}})
    program = build(engine)
    calls = program.warm()
    with_parameters = [t for t in program.toolbox if t.parameters]
    assert calls == len(engine.calls) == 1 + len(with_parameters)
    assert engine.roles_called() == ["intent"] + ["parameters"] * len(with_parameters)
    assert all(call.config.max_tokens == 1 for call in engine.calls)  # nothing to generate
    shown = [call.inputs["tool"] for call in engine.calls[1:]]
    assert [spec.split(":")[0] for spec in shown] == [f"- {t.name}" for t in with_parameters]
    # a real request afterwards is answered as without warming: warming ran no tool
    result = program(message="Add a task called x", calls_only=True).result
    assert [(c.tool, c.arguments) for c in result.calls] == [("add_task", {"title": "x"})]
    assert result.state == TodoState(tasks=[Task(title="x")])


def test_strategies_without_a_warm_up_make_no_call(build: Build) -> None:
    engine = answers()
    assert build(engine, strategy="native").warm() == 0
    assert engine.calls == []
