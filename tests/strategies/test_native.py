"""Strategy ``native``: the model's own function calling, with error feedback and retries.

Fakes answer ``{"tool_calls": [...]}`` when the request carries tools, which the fake engine
returns as native tool calls; a real run on the embedded model is marked ``embedded``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dspy
import pytest
from dspy.lm15 import Config, FunctionTool, Message, Request

from freyr_dspy.backends import LlamaCppEngine
from freyr_dspy.backends._llamacpp_tools import tool_results_as_user
from freyr_dspy.domains import TodoState
from freyr_dspy.errors import ToolUnsupportedError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Failure, Result, RoleModel, Sampling
from freyr_dspy.strategies._native import (
    NativeToolsAdapter,
    NativeToolsSignature,
    as_dspy_tool,
    native_adapter,
)
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake


class RecordingLM(FunctionLM):
    """A FunctionLM that also keeps the raw requests (to inspect the tool messages)."""

    def __init__(self, fn: Callable[[FakeCall], Any]) -> None:
        super().__init__(fn)
        self.requests: list[Request] = []

    def complete(self, request: Request) -> Any:
        self.requests.append(request)
        return super().complete(request)


def add(title: str, priority: int = 1) -> dict[str, Any]:
    return {"tool_calls": [{"name": "add_task", "args": {"title": title, "priority": priority}}]}


@pytest.fixture
def fake() -> Iterator[Callable[[Callable[[FakeCall], Any]], RecordingLM]]:
    def make(fn: Callable[[FakeCall], Any]) -> RecordingLM:
        engine = RecordingLM(fn)
        register_fake("native-test", engine)
        return engine

    yield make
    unregister_fake("native-test")


def run(message: str, *, adapter: str = "json", max_retries: int = 3, state: Any = None) -> Result:
    program = FreyrProgram(
        "todo",
        strategy="native",
        adapter=adapter,  # type: ignore[arg-type]
        max_retries=max_retries,
    )
    program.apply_assignment({"native": RoleModel(model="fake/native-test")})
    result: Result = program(message=message, state=state).result
    return result


@pytest.mark.parametrize("adapter", ["json", "chat"])
def test_calls_are_executed_then_the_model_replies(fake: Any, adapter: str) -> None:
    engine = fake(lambda call: add("buy milk", 2) if call.tools else {"response": "Added it."})
    result = run("Add a task called buy milk with priority 2", adapter=adapter)
    assert result.reply == "Added it." and result.failure is None
    assert [(c.tool, c.arguments, c.outcome.ok) for c in result.calls] == [
        ("add_task", {"title": "buy milk", "priority": 2}, True)
    ]
    assert result.intents == ["add_task"]
    assert [t.title for t in result.state.tasks] == ["buy milk"]
    assert set(result.usage) == {"native"} and result.usage["native"].lm_calls == 2
    assert result.usage["native"].input_tokens > 0
    assert [c.role for c in engine.calls] == ["native", "native"]
    assert len(engine.requests[0].tools) == 5 and not engine.requests[1].tools  # reply: no tools


def test_errors_go_back_as_tool_messages_and_are_fixed(fake: Any) -> None:
    def answer(call: FakeCall) -> Any:
        if not call.tools:
            return {"response": "Done."}
        return add("renew passport", 9) if len(engine.requests) == 1 else add("renew passport", 5)

    engine = fake(answer)
    result = run("Add an urgent task: renew passport, priority 9 or else 5")
    assert [c.outcome.ok for c in result.calls] == [False, True]
    assert "priority must be between 1 and 5, got 9" in result.calls[0].outcome.message
    assert result.failure is None and result.state.tasks[0].priority == 5
    retry = engine.requests[1]
    roles = [m.role for m in retry.messages]
    assert roles[:3] == ["user", "assistant", "tool"]
    feedback = retry.messages[2].parts[0]
    assert "ERROR: add_task failed: priority must be between 1 and 5, got 9" in str(feedback)
    assert retry.messages[1].parts[0].name == "add_task"  # the model's own call, replayed


def test_the_retry_budget_matches_freyr(fake: Any) -> None:
    engine = fake(lambda call: add("x", 0) if call.tools else {"response": "Sorry."})
    result = run("Add x with priority 0", max_retries=2)
    assert len(result.calls) == 3 and not any(c.outcome.ok for c in result.calls)
    assert result.failure == Failure(kind="retries", detail="retries exhausted for add_task")
    assert len(engine.requests) == 4  # 1 + 2 retries, then the reply without tools
    assert result.reply == "Sorry." and result.state.tasks == []


def test_a_text_answer_ends_the_turn(fake: Any) -> None:
    fake(lambda call: {"response": "Hello! I manage your to-do list."})
    result = run("Hi, who are you?")
    assert result.calls == [] and result.reply == "Hello! I manage your to-do list."
    assert result.usage["native"].lm_calls == 1


def test_several_calls_in_one_answer(fake: Any) -> None:
    def answer(call: FakeCall) -> Any:
        if not call.tools:
            return {"response": "Both done."}
        return {
            "tool_calls": [
                {"name": "complete_task", "args": {"title": "pay rent"}},
                {"name": "convert_minutes", "args": {"minutes": "135"}},
            ]
        }

    fake(answer)
    state = TodoState.model_validate({"tasks": [{"title": "pay rent"}]})
    result = run("Mark pay rent done and convert 135 minutes", state=state)
    assert [c.outcome.message for c in result.calls] == ["Marked 'pay rent' as done.", "2 h 15 min"]
    assert result.intents == ["complete_task", "convert_minutes"]


def test_unknown_tool_is_fed_back(fake: Any) -> None:
    def answer(call: FakeCall) -> Any:
        if not call.tools:
            return {"response": "ok"}
        first = {"tool_calls": [{"name": "create_task", "args": {"title": "a"}}]}
        return first if len(engine.requests) == 1 else add("a")

    engine = fake(answer)
    result = run("Add a")
    assert "unknown tool 'create_task'" in result.calls[0].outcome.message
    assert result.calls[1].outcome.ok and result.failure is None


class NoTools(FunctionLM):
    supports_function_calling = False


def test_a_model_without_tool_calling_is_refused() -> None:
    register_fake("native-none", NoTools(lambda call: {"response": "text"}))
    try:
        program = FreyrProgram("todo", strategy="native")
        program.apply_assignment({"native": RoleModel(model="fake/native-none")})
        with pytest.raises(ToolUnsupportedError, match=r"no native tool calling.*fake/native-none"):
            program(message="Add a task called x")
    finally:
        unregister_fake("native-none")


class RefusingEngine(FunctionLM):
    def complete(self, request: Request) -> Any:
        if len(request.tools) > 1:
            raise ToolUnsupportedError("cannot choose among tools", model=request.model)
        return super().complete(request)


def test_a_backend_that_refuses_tools_raises_not_answers() -> None:
    register_fake("native-refusing", RefusingEngine(lambda call: {"response": "text"}))
    try:
        program = FreyrProgram("todo", strategy="native")
        program.apply_assignment({"native": RoleModel(model="fake/native-refusing")})
        with pytest.raises(ToolUnsupportedError, match="cannot choose among tools"):
            program(message="Add a task called x")
    finally:
        unregister_fake("native-refusing")


def test_llamacpp_engine_without_tool_format_refuses_a_free_choice() -> None:
    engine = LlamaCppEngine("/nonexistent/model.gguf")  # never loaded: refused before
    tools = tuple(
        FunctionTool(name, "d", {"type": "object", "properties": {}}) for name in ("a", "b")
    )
    request = Request(
        model="embedded/x", messages=(Message.user("hi"),), tools=tools, config=Config()
    )
    with pytest.raises(ToolUnsupportedError, match="cannot choose among tools natively"):
        engine.complete(request)


def test_tool_results_become_user_turns_for_llamacpp_handlers() -> None:
    messages = [
        {"role": "user", "content": "add x"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ERROR: bad"},
    ]
    converted = tool_results_as_user(messages)
    assert converted[:2] == messages[:2]
    assert converted[2] == {"role": "user", "content": "Result of functions.add_task: ERROR: bad"}


def test_native_adapter_turns_native_calling_on() -> None:
    assert native_adapter(None).use_native_function_calling
    assert isinstance(native_adapter(dspy.ChatAdapter()), dspy.ChatAdapter)
    assert native_adapter(dspy.ChatAdapter()).use_native_function_calling
    native = native_adapter(dspy.JSONAdapter())
    assert isinstance(native, NativeToolsAdapter) and native.use_native_function_calling
    assert native_adapter(native) is native


def test_native_adapter_asks_for_tool_calls_not_a_json_reply() -> None:
    adapter = NativeToolsAdapter()
    system, user = adapter.format(NativeToolsSignature, [], {"message": "hi", "state": "{}"})
    assert "JSON object" not in system["content"] + user["content"]  # that talked Qwen out of calls
    assert "Call the tools" in system["content"]
    assert "<message>\nhi\n</message>" in user["content"]  # lean: the inputs only


def test_a_plain_text_reply_is_not_a_parse_failure_but_a_broken_call_is() -> None:
    from freyr_dspy.strategies._native import _attempted_call

    assert not _attempted_call("Your task was added.")
    assert _attempted_call('<tool_call>{"name": "add_task", "argu')
    assert _attempted_call('{"name": "add_task", "arguments": "{\\"title\\": 1}"}')


def test_dspy_tool_carries_the_exact_schema() -> None:
    program = FreyrProgram("todo", strategy="native")
    for tool in program.toolbox:
        described = as_dspy_tool(tool).format_as_litellm_function_call()
        assert described == tool.openai_schema() or (
            described["function"]["parameters"]["required"]
            == tool.openai_schema()["function"]["parameters"]["required"]
        )
        assert described["function"]["parameters"]["required"] == [
            p.name for p in tool.parameters if p.required
        ]


@pytest.mark.embedded
def test_native_on_the_embedded_model() -> None:
    full = FreyrProgram("todo").toolbox
    program = FreyrProgram(
        "todo", strategy="native", max_retries=0, toolbox=full.subset(["add_task", "list_tasks"])
    )
    program.apply_assignment(
        {
            "native": RoleModel(
                model="embedded/smollm2-135m",
                sampling=Sampling(temperature=0.0, seed=3, max_tokens=48),
            )
        }
    )
    result: Result = program(message="Add a task called buy milk").result
    usage = result.usage["native"]
    assert usage.lm_calls in (1, 2) and usage.input_tokens > 200  # the tool schemas were sent
    assert result.failure is None or result.failure.detail.startswith("retries exhausted")
    assert all(
        c.tool in program.toolbox.names or "unknown tool" in c.outcome.message for c in result.calls
    )
    assert result.calls or result.reply


def test_giving_up_in_text_after_an_error_is_a_failure(fake: Any) -> None:
    def answer(call: FakeCall) -> Any:
        return add("x", 0) if len(engine.requests) == 1 else {"response": "I give up."}

    engine = fake(answer)
    result = run("Add x with priority 0")
    assert result.reply == "I give up." and result.failure == Failure(
        kind="retries", detail="retries exhausted for add_task"
    )
    assert len(engine.requests) == 2
