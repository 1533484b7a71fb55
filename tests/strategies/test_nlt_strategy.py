"""Strategy ``nlt`` on strict fakes: YES/NO selection, parameters, execution, reply."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Failure
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox

TODO_ASSESSMENT = {
    "thinking": "a new task and a duration",
    "assessment": "add_task -- YES\ncomplete_task -- NO\nremove_task -- NO\nlist_tasks -- NO\n"
    "convert_minutes -- YES\nAssessment finished.",
}


def program(answers: dict[str, Any], **kwargs: Any) -> tuple[FreyrProgram, FunctionLM]:
    """A todo program whose every role is answered by ``answers[role]`` (a value or callable)."""

    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    engine = FunctionLM(answer)
    prog = FreyrProgram("todo", strategy="nlt", **kwargs)
    prog.set_lm(dspy.LM("fake/nlt", engine=engine, cache=False))
    return prog, engine


def parameters_by_tool(call: FakeCall) -> dict[str, Any]:
    if "add_task" in call.inputs["tool"]:
        return {"arguments": {"title": "buy milk", "priority": "2"}}
    return {"arguments": {"minutes": 90}}


def test_selects_several_tools_fills_parameters_and_summarises() -> None:
    prog, engine = program(
        {
            "tool_selection": TODO_ASSESSMENT,
            "parameters": parameters_by_tool,
            "summary": {"reply": "Added buy milk; 90 minutes is 1 h 30 min."},
        }
    )
    result = prog(message="Add buy milk with priority 2, and how long is 90 minutes?").result
    assert [c.tool for c in result.calls] == ["add_task", "convert_minutes"]
    assert all(c.outcome.ok for c in result.calls)
    assert result.state.tasks[0].title == "buy milk" and result.state.tasks[0].priority == 2
    assert result.intents == ["add_task", "convert_minutes"]
    assert result.reply.startswith("Added buy milk")
    assert engine.roles_called() == ["tool_selection", "parameters", "parameters", "summary"]
    selection = engine.calls[0]
    assert "- convert_minutes: Convert a duration" in selection.inputs["tools"]
    assert set(result.usage) == {"tool_selection", "parameters", "summary"}
    assert result.usage["tool_selection"].input_tokens > 0


def test_all_no_means_a_chat_reply_without_failure() -> None:
    assessment = (
        "\n".join(f"{n} -- NO" for n in ("add_task", "list_tasks")) + "\nAssessment finished."
    )
    prog, engine = program(
        {
            "tool_selection": {"thinking": "hello", "assessment": assessment},
            "chat": {"reply": "Hi!"},
        }
    )
    result = prog(message="hello there").result
    assert result.calls == [] and result.reply == "Hi!" and result.failure is None
    assert engine.roles_called() == ["tool_selection", "chat"]


def test_unreadable_selection_is_reported_as_failure() -> None:
    prog, _ = program(
        {"tool_selection": "I'm not sure how to check on it.", "chat": {"reply": "Sorry?"}}
    )
    result = prog(message="do something").result
    assert result.calls == []
    assert result.failure == Failure(
        kind="parse", detail="selection could not be parsed: no tool was assessed YES or NO"
    )


def test_unknown_names_only_are_reported() -> None:
    prog, _ = program(
        {
            "tool_selection": {"thinking": "", "assessment": "make_coffee -- YES"},
            "chat": {"reply": "no"},
        }
    )
    assert prog(message="coffee").result.failure == Failure(
        kind="unknown_tool", detail="selection named no known tool: make_coffee"
    )


def test_failed_call_is_retried_with_the_error_as_feedback() -> None:
    attempts: list[str] = []

    def parameters(call: FakeCall) -> dict[str, Any]:
        attempts.append(call.inputs["feedback"])
        return {"arguments": {"title": "x", "priority": 9 if len(attempts) == 1 else 3}}

    prog, _ = program(
        {
            "tool_selection": {"thinking": "", "assessment": "add_task -- YES"},
            "parameters": parameters,
            "summary": {"reply": "ok"},
        }
    )
    result = prog(message="add x, priority 9 or else 3").result
    assert result.calls[0].outcome.ok and result.calls[0].attempts == 2
    assert attempts[0] == "none" and "priority must be between 1 and 5" in attempts[1]


def spec_only_program(answers: dict[str, Any], **options: Any) -> tuple[FreyrProgram, FunctionLM]:
    from freyr_dspy.domains import Domain

    box = Toolbox(
        [
            Tool(name="Past Purchases", description="orders"),
            Tool(name="Talk to a Human", description="live agent"),
        ]
    )
    engine = FunctionLM(lambda call: answers.get(call.role))
    prog = FreyrProgram(
        Domain("spec", "spec-only", make_toolbox=lambda: box),
        strategy=make_strategy("nlt", **options),
    )
    prog.set_lm(dspy.LM("fake/spec", engine=engine, cache=False))
    return prog, engine


@pytest.mark.parametrize("respond", [True, False])
def test_parameterless_tools_skip_parameters_and_respond_is_optional(respond: bool) -> None:
    prog, engine = spec_only_program(
        {
            "tool_selection": {
                "thinking": "",
                "assessment": "Past Purchases -- YES\nTalk to a Human -- YES",
            },
            "summary": {"reply": "done"},
        },
        respond=respond,
    )
    result = prog(message="my order, and a human please").result
    assert [c.tool for c in result.calls] == ["Past Purchases", "Talk to a Human"]
    assert all(c.arguments == {} for c in result.calls)
    # Spec-only tools record their calls: the reply lists them, no summary is written.
    assert engine.roles_called() == ["tool_selection"]
    listed = (
        "Prepared, not run (these tools have no function here): "
        "Past Purchases(); Talk to a Human()."
    )
    assert result.reply == (listed if respond else "")


def test_names_catalog_level() -> None:
    prog, engine = spec_only_program(
        {"tool_selection": {"thinking": "", "assessment": ""}}, respond=False
    )
    prog.catalog_level = "names"
    prog(message="hi")
    assert engine.calls[0].inputs["tools"] == "- Past Purchases\n- Talk to a Human"
