"""Strategy ``prompted`` (He 2024): tolerant call extraction and the observation loop."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles._prompted import CALL_FORMAT, ToolRequest, extract_calls
from freyr_dspy.testing import FakeCall, FunctionLM


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (
            '{"tool": "add_task", "parameters": {"title": "milk"}}',
            [ToolRequest("add_task", {"title": "milk"})],
        ),
        (
            'Sure!\n```json\n{"tool": "add_task", "parameters": {"title": "milk"}}\n```',
            [ToolRequest("add_task", {"title": "milk"})],
        ),
        (
            "{'tool': 'add_task', 'parameters': {'title': 'milk'}}",
            [ToolRequest("add_task", {"title": "milk"})],
        ),
        (
            '{"name": "add_task", "arguments": "{\\"title\\": \\"milk\\"}"}',
            [ToolRequest("add_task", {"title": "milk"})],
        ),
        ('{"tool": "list_tasks"}', [ToolRequest("list_tasks", {})]),
        (
            '{"tool": "a", "parameters": {}}\n{"tool": "b", "parameters": {"x": 1}}',
            [ToolRequest("a", {}), ToolRequest("b", {"x": 1})],
        ),
        (
            '[{"tool": "a", "parameters": {}}, {"tool": "b", "parameters": {}}]',
            [ToolRequest("a", {}), ToolRequest("b", {})],
        ),
        ('{"response": "{\\"tool\\": \\"a\\", \\"parameters\\": {}}"}', [ToolRequest("a", {})]),
        (
            '{"tool_calls": [{"function": {"name": "a", "arguments": {"x": 2}}}]}',
            [ToolRequest("a", {"x": 2})],
        ),
        (
            '{"tool": "add_task", "parameters": {"title": "mi',
            [ToolRequest("add_task", {"title": "mi"})],
        ),
    ],
)
def test_extracts_calls_from_messy_replies(text: str, calls: list[ToolRequest]) -> None:
    assert list(extract_calls(text).calls) == calls


@pytest.mark.parametrize(
    "text",
    [
        "Your task list is empty.",
        "{response}",
        '{"response": "All done!"}',
        "",
        "{}",
        "{{{",
        '{"parameters": {"x": 1}}',
    ],
)
def test_plain_answers_have_no_calls(text: str) -> None:
    reply = extract_calls(text)
    assert reply.calls == ()


def test_text_around_calls_is_kept() -> None:
    reply = extract_calls('Let me check. {"tool": "a", "parameters": {}} Done')
    assert reply.text == "Let me check.  Done"
    assert extract_calls('{"response": "All done!"}').text == "All done!"


def program(turns: list[Any], **kwargs: Any) -> tuple[FreyrProgram, FunctionLM]:
    """A todo program whose ``prompted`` role answers ``turns`` in order (last one repeats)."""

    def answer(call: FakeCall) -> Any:
        index = sum(1 for c in engine.calls if c.role == "prompted") - 1
        return turns[min(index, len(turns) - 1)]

    engine = FunctionLM(answer)
    prog = FreyrProgram("todo", strategy="prompted", **kwargs)
    prog.set_lm(dspy.LM("fake/prompted", engine=engine, cache=False))
    return prog, engine


def call(tool: str, **parameters: Any) -> dict[str, str]:
    import json

    return {"response": json.dumps({"tool": tool, "parameters": parameters})}


def test_call_then_observation_then_answer() -> None:
    prog, engine = program([call("add_task", title="milk"), {"response": "Added milk."}])
    result = prog(message="add milk").result
    assert [c.tool for c in result.calls] == ["add_task"] and result.calls[0].outcome.ok
    assert result.reply == "Added milk." and result.failure is None
    assert result.state.tasks[0].title == "milk"
    first, second = engine.calls
    assert first.inputs["observations"] == "none"
    assert second.inputs["observations"].startswith("Observation: add_task(title='milk') -> Added")
    assert result.usage["prompted"].lm_calls == 2


def test_tools_and_format_are_in_the_system_prompt() -> None:
    prog, engine = program([{"response": "Hello."}])
    prog(message="hi")
    first = engine.calls[0]
    instructions = first.prompt.split("<conversation>", 1)[0]  # the system message
    assert CALL_FORMAT.splitlines()[0] in instructions
    assert "- convert_minutes: Convert a duration" in instructions
    assert not any("convert_minutes" in value for value in first.inputs.values())


def test_failed_call_goes_back_as_an_error_observation_and_is_retried() -> None:
    prog, engine = program(
        [
            call("add_task", title="x", priority=9),
            call("add_task", title="x", priority=3),
            {"response": "ok"},
        ]
    )
    result = prog(message="add x, priority 9 or else 3").result
    assert len(result.calls) == 1
    record = result.calls[0]
    assert record.outcome.ok and record.attempts == 2
    assert "priority must be between 1 and 5" in record.errors[0]
    assert "ERROR: add_task failed" in engine.calls[1].inputs["observations"]


def test_retry_budget_ends_the_loop() -> None:
    prog, engine = program([call("add_task", title="")], max_retries=2)
    result = prog(message="add nothing").result
    assert result.failure is not None and result.failure.detail.startswith("retries exhausted")
    assert len(engine.calls) == 3  # 1 + max_retries attempts
    assert not result.calls[0].outcome.ok and result.calls[0].attempts == 3


def test_unknown_tool_is_an_error_observation() -> None:
    prog, engine = program([call("make_coffee"), {"response": "I cannot."}])
    result = prog(message="coffee").result
    assert result.calls[0].tool == "make_coffee" and not result.calls[0].outcome.ok
    assert "unknown tool 'make_coffee'" in engine.calls[1].inputs["observations"]
    assert result.reply == "I cannot." and result.intents == []


def test_repeating_a_successful_call_ends_the_loop() -> None:
    prog, engine = program([call("list_tasks")])
    result = prog(message="list").result
    assert len(engine.calls) == 2 and len(result.calls) == 1
    assert result.failure is None


def test_several_calls_in_one_turn() -> None:
    both = {
        "response": '{"tool": "add_task", "parameters": {"title": "a"}}\n'
        '{"tool": "convert_minutes", "parameters": {"minutes": "75"}}'
    }
    prog, _ = prog_and = program([both, {"response": "done"}])
    result = prog(message="a and 75 minutes").result
    assert [c.tool for c in result.calls] == ["add_task", "convert_minutes"]
    assert result.calls[1].outcome.message == "1 h 15 min"
    assert prog_and[1].calls[1].inputs["observations"].count("Observation:") == 2


def test_raw_text_reply_under_the_chat_adapter() -> None:
    # Raw text breaks the adapter's format (and DSPy's JSON retry): the role reads it anyway.
    engine = FunctionLM(
        lambda c: (
            '{"tool": "list_tasks", "parameters": {}}'
            if c.inputs["observations"] == "none"
            else "Nothing to do."
        )
    )
    prog = FreyrProgram("todo", strategy="prompted", adapter="chat")
    prog.set_lm(dspy.LM("fake/raw", engine=engine, cache=False))
    result = prog(message="list").result
    assert [c.tool for c in result.calls] == ["list_tasks"]
    assert result.reply == "Nothing to do."
