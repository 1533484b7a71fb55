"""The lean adapter: a compact prompt, static inputs first, DSPy's JSON parsing underneath."""

from __future__ import annotations

import inspect

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError

from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting._adapters import LeanAdapter, input_order, make_adapter
from freyr_dspy.prompting._demo_pool import RequestDemos
from freyr_dspy.roles import IntentSignature, ParametersSignature, SummarySignature
from freyr_dspy.testing import FunctionLM, make_fake_lm, register_fake, unregister_fake

INPUTS = {
    "conversation": "(none)",
    "message": "Add a task called milk",
    "tools": "- add_task: Add a task.\n- delete_task: Delete a task.",
    "state": "no tasks",
}


def test_lean_is_the_default_adapter_of_a_program() -> None:
    assert FreyrProgram("todo").adapter == "lean"
    assert isinstance(make_adapter("lean"), LeanAdapter)
    assert isinstance(make_adapter("anything else"), LeanAdapter)


def test_static_inputs_come_first_and_the_rest_keeps_the_signature_order() -> None:
    assert input_order(IntentSignature) == ["tools", "state", "conversation", "message"]
    assert input_order(ParametersSignature) == [
        "tool",
        "state",
        "conversation",
        "message",
        "feedback",
    ]
    assert input_order(SummarySignature) == ["state", "message", "outcomes"]


def test_prompt_has_instructions_output_keys_and_tagged_inputs_only() -> None:
    system, user = LeanAdapter().format(IntentSignature, [], INPUTS)
    assert system["content"].startswith("Decide which tools must run")
    assert '"intents" (list[str]): tool names to call' in system["content"]
    assert "Your input fields are" not in system["content"]  # DSPy's prose is gone
    content = user["content"]
    assert content.index("<tools>") < content.index("<state>") < content.index("<message>")
    assert "<message>\nAdd a task called milk\n</message>" in content
    assert "Respond with" not in content


def test_context_inputs_that_hold_nothing_are_left_out_but_the_message_never_is() -> None:
    from freyr_dspy.roles import ParametersSignature

    inputs = {
        "conversation": "(none)",
        "message": "none",  # a user's answer, not a placeholder
        "state": "(no state)",
        "tool": "- add_task: Add.",
        "feedback": "none",
    }
    _, user = LeanAdapter().format(ParametersSignature, [], inputs)
    assert user["content"] == "<tool>\n- add_task: Add.\n</tool>\n<message>\nnone\n</message>"
    shown = {**inputs, "state": "2 tasks", "feedback": "add_task failed: no title"}
    _, user = LeanAdapter().format(ParametersSignature, [], shown)
    assert "<state>\n2 tasks\n</state>" in user["content"]
    assert "<feedback>\nadd_task failed: no title\n</feedback>" in user["content"]


def test_what_the_program_writes_for_nothing_is_what_the_adapter_leaves_out() -> None:
    from freyr_dspy.domains import render_json_state
    from freyr_dspy.program import render_conversation
    from freyr_dspy.prompting._placeholders import says_nothing
    from freyr_dspy.strategies.retry._loop import parameters_inputs

    assert says_nothing("conversation", render_conversation([]))
    assert says_nothing("conversation", render_conversation("  "))
    assert says_nothing("state", render_json_state(None))
    assert says_nothing(
        "feedback", inspect.signature(parameters_inputs).parameters["feedback"].default
    )
    assert not says_nothing(
        "conversation", render_conversation([{"role": "user", "content": "hi"}])
    )
    assert not says_nothing("state", render_json_state({"tasks": []}))
    assert not says_nothing("message", "none")


def test_lean_prompt_is_well_under_half_of_dspys_json_prompt() -> None:
    lean = LeanAdapter().format(IntentSignature, [], INPUTS)
    full = dspy.JSONAdapter().format(IntentSignature, [], INPUTS)
    lean_chars = sum(len(m["content"]) for m in lean)
    full_chars = sum(len(m["content"]) for m in full)
    assert lean_chars < 0.5 * full_chars


def test_demos_are_user_and_assistant_turns_with_a_json_answer() -> None:
    demo = dspy.Example(**INPUTS, intents=["add_task"])
    messages = LeanAdapter().format(IntentSignature, [demo], INPUTS)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == '{"intents": ["add_task"]}'


def test_a_requests_own_demos_leave_its_catalog_at_the_start_of_the_prompt() -> None:
    demo = {"conversation": "(none)", "message": "Delete the milk task", "intents": ["delete_task"]}
    chosen = LeanAdapter().format(IntentSignature, RequestDemos([demo]), INPUTS)
    fixed = LeanAdapter().format(IntentSignature, [demo], INPUTS)
    # fixed demos: DSPy's layout, the catalog in the request's own turn
    assert "<tools>" in fixed[-1]["content"] and "<tools>" not in fixed[0]["content"]
    # demos chosen for this request change from one request to the next: the catalog and the
    # state close the system message, so requests to one toolbox share their start
    assert chosen[0]["content"].endswith(
        "<tools>\n" + INPUTS["tools"] + "\n</tools>\n<state>\nno tasks\n</state>"
    )
    assert chosen[-1]["content"] == "<message>\nAdd a task called milk\n</message>"
    other = LeanAdapter().format(
        IntentSignature, RequestDemos([demo]), {**INPUTS, "message": "Add bread"}
    )
    assert other[0] == chosen[0]  # the same prefix for another request
    # a demo that shows a catalog of its own keeps DSPy's layout
    with_tools = LeanAdapter().format(
        IntentSignature, RequestDemos([{**demo, "tools": "- x"}]), INPUTS
    )
    assert "<tools>" in with_tools[-1]["content"]


def test_constraints_of_a_stated_contract_reach_the_system_message() -> None:
    stated = IntentSignature.with_updated_fields("intents", constraints="at most 2 names")
    system = LeanAdapter().format_system_message(stated)
    assert "Constraints: at most 2 names" in system


def test_answers_parse_like_dspys_json_adapter_and_garbage_is_a_parse_error() -> None:
    adapter = LeanAdapter()
    assert adapter.parse(IntentSignature, '{"intents": ["add_task"]}') == {"intents": ["add_task"]}
    assert adapter.parse(IntentSignature, 'Sure! {"intents": ["a", "b"]}')["intents"] == ["a", "b"]
    with pytest.raises(AdapterParseError):
        adapter.parse(IntentSignature, "[" * 300)


def test_a_program_runs_end_to_end_under_the_lean_adapter() -> None:
    def answer(call):  # type: ignore[no-untyped-def]
        if call.role == "intent":
            # static first; no conversation yet, so none is shown (read back as the placeholder)
            assert list(call.inputs)[:3] == ["tools", "state", "message"]
            assert "<conversation>" not in call.prompt and call.inputs["conversation"] == "(none)"
            return {"intents": ["add_task"]}
        if call.role == "parameters":
            return {"arguments": {"title": "milk"}}
        return {"reply": "Added milk."}

    register_fake("lean-e2e", FunctionLM(answer))
    try:
        with dspy.context(lm=make_fake_lm("fake/lean-e2e")):
            result = FreyrProgram("todo")(message="Add a task called milk").result
    finally:
        unregister_fake("lean-e2e")
    assert [(c.tool, c.arguments) for c in result.calls] == [("add_task", {"title": "milk"})]
    assert result.reply == "Added milk."
