"""The shipped test doubles: strict, deterministic, adapter-faithful, recording their calls."""

from __future__ import annotations

from collections.abc import Iterator

import dspy
import pytest

from freyr_dspy.backends import make_lm
from freyr_dspy.errors import FakeLMError, UnknownModelError
from freyr_dspy.roles import IntentClassifier, SummarySignature
from freyr_dspy.schemas import Sampling
from freyr_dspy.testing import (
    FakeCall,
    FunctionLM,
    ScriptedLM,
    make_fake_lm,
    register_fake,
    unregister_fake,
)

INTENT_INPUTS = {
    "conversation": "(none)",
    "message": "add milk",
    "tools": "- add_task: Add.",
    "state": "empty",
}


@pytest.fixture
def fake_names() -> Iterator[list[str]]:
    """Names registered by a test; removed afterwards so tests stay independent."""
    names: list[str] = []
    yield names
    for name in names:
        unregister_fake(name)


def intent_role(engine: ScriptedLM | FunctionLM, model: str = "fake/t") -> IntentClassifier:
    role = IntentClassifier()
    role.set_lm(dspy.LM(model, engine=engine, cache=False))
    return role


@pytest.mark.parametrize("adapter", [dspy.JSONAdapter(), dspy.ChatAdapter()])
def test_scripted_answer_goes_through_the_active_adapter(adapter: dspy.Adapter) -> None:
    engine = ScriptedLM({"intent": {"milk": {"intents": ["add_task"]}}})
    with dspy.context(adapter=adapter):
        prediction = intent_role(engine)(**INTENT_INPUTS)
    assert prediction.intents == ["add_task"]
    assert prediction.parsed_ok
    call = engine.calls[0]
    assert (call.model, call.role) == ("fake/t", "intent")
    assert dict(call.inputs) == INTENT_INPUTS


def test_unscripted_call_raises_with_the_prompt() -> None:
    engine = ScriptedLM({"intent": {"something else": {"intents": []}}})
    with pytest.raises(Exception) as info, dspy.context(adapter=dspy.JSONAdapter()):
        intent_role(engine)(**INTENT_INPUTS)
    cause = info.value if isinstance(info.value, FakeLMError) else info.value.__cause__
    assert isinstance(cause, FakeLMError)
    assert "unscripted call to role 'intent'" in str(cause)


def test_scripted_keys_match_the_message_first_then_star() -> None:
    engine = ScriptedLM({"intent": {"MILK": {"intents": ["a"]}, "*": {"intents": ["b"]}}})
    role = intent_role(engine)
    with dspy.context(adapter=dspy.JSONAdapter()):
        assert role(**INTENT_INPUTS).intents == ["a"]
        assert role(**{**INTENT_INPUTS, "message": "hello"}).intents == ["b"]


def test_function_lm_none_is_unscripted_and_calls_are_recorded() -> None:
    def answer(call: FakeCall) -> dict[str, list[str]] | None:
        return {"intents": ["x"]} if "milk" in call.inputs["message"] else None

    engine = FunctionLM(answer)
    role = intent_role(engine)
    with dspy.context(adapter=dspy.JSONAdapter()):
        assert role(**INTENT_INPUTS).intents == ["x"]
        with pytest.raises(Exception, match="unscripted"):
            role(**{**INTENT_INPUTS, "message": "bread"})
    assert engine.roles_called() == ["intent", "intent"]


def test_fake_output_is_deterministic_and_reports_usage() -> None:
    engine = ScriptedLM({"intent": {"*": {"intents": ["add_task"]}}})
    role = intent_role(engine)
    with dspy.context(adapter=dspy.JSONAdapter()), dspy.track_usage() as tracker:
        first = role(**INTENT_INPUTS)
        second = role(**INTENT_INPUTS)
    assert first.intents == second.intents
    entries = tracker.usage_data["fake/t"]
    assert len(entries) == 2
    assert entries[0] == entries[1]
    # the stand-in tokenizer counts words of the prompt and of the answer
    assert entries[0]["prompt_tokens"] == len(engine.calls[0].prompt.split())
    assert entries[0]["completion_tokens"] >= 1


def test_roles_with_identical_fields_are_told_apart_by_instructions() -> None:
    from freyr_dspy.roles import ROLES, Role, register_role

    class EchoSummarySignature(SummarySignature):
        """Repeat the outcomes word for word."""

    class EchoSummary(Role):
        signature = EchoSummarySignature

    register_role("echo_summary_test", EchoSummary)
    try:
        engine = ScriptedLM(
            {"echo_summary_test": {"*": {"reply": "echo"}}, "summary": {"*": {"reply": "summary"}}}
        )
        inputs = {"message": "m", "outcomes": "o", "state": "s"}
        for role_cls, expected in ((EchoSummary, "echo"), (ROLES["summary"], "summary")):
            role = role_cls()
            role.set_lm(dspy.LM("fake/t", engine=engine, cache=False))
            with dspy.context(adapter=dspy.JSONAdapter()):
                assert role(**inputs).reply == expected
    finally:
        ROLES.pop("echo_summary_test")


def test_native_tool_calls_for_requests_with_tools() -> None:
    def get_weather(city: str) -> str:
        """Weather of a city."""
        return "sunny"

    class Ask(dspy.Signature):
        """Use the tools."""

        question: str = dspy.InputField()
        tools: list[dspy.Tool] = dspy.InputField()
        calls: dspy.ToolCalls = dspy.OutputField()

    engine = ScriptedLM(
        {"": {"*": {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}}}
    )
    lm = dspy.LM("fake/native", engine=engine, cache=False)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter(use_native_function_calling=True)):
        prediction = dspy.Predict(Ask)(question="Paris?", tools=[dspy.Tool(get_weather)])
    [call] = prediction.calls.tool_calls
    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert engine.calls[0].tools == ("get_weather",)


def test_registry_shares_an_instance_or_builds_fresh_ones(fake_names: list[str]) -> None:
    shared = ScriptedLM({"intent": {"*": {"intents": ["a"]}}})
    register_fake("shared_t", shared)
    register_fake("fresh_t", lambda: ScriptedLM({}))
    fake_names.extend(["shared_t", "fresh_t"])
    first, second = make_fake_lm("fake/shared_t"), make_fake_lm("fake/shared_t")
    assert first.engine is second.engine is shared  # type: ignore[attr-defined]
    assert make_fake_lm("fake/fresh_t").engine is not make_fake_lm("fake/fresh_t").engine  # type: ignore[attr-defined]


def test_make_lm_fake_ids(fake_names: list[str]) -> None:
    register_fake("known_t", ScriptedLM({}))
    fake_names.append("known_t")
    lm = make_lm("fake/known_t", Sampling(temperature=0.3))
    assert lm.model == "fake/known_t"
    assert make_lm("fake/rules").model == "fake/rules"  # built in
    with pytest.raises(UnknownModelError, match="Did you mean 'fake/known_t'"):
        make_lm("fake/known")


def test_sampling_reaches_the_engine() -> None:
    engine = ScriptedLM({"intent": {"*": {"intents": []}}})
    role = IntentClassifier()
    role.set_lm(
        dspy.LM(
            "fake/t", engine=engine, cache=False, temperature=0.7, top_p=0.6, max_tokens=77, seed=5
        )
    )
    with dspy.context(adapter=dspy.JSONAdapter()):
        role(**INTENT_INPUTS)
    config = engine.calls[0].config
    assert (config.temperature, config.top_p, config.max_tokens, config.seed) == (0.7, 0.6, 77, 5)
