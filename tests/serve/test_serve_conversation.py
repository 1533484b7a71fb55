"""Reading a message list as the program's inputs, and a result as the answer's choice."""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.schemas import CallRecord, Failure, Outcome, Result
from freyr_dspy.serve._conversation import read_turn
from freyr_dspy.serve._errors import ApiError
from freyr_dspy.serve._protocol import ChatRequest
from freyr_dspy.serve._translate import ToolPlan, choice_of, toolbox_of


def turn_of(messages: list[dict[str, Any]]) -> Any:
    return read_turn(ChatRequest.model_validate({"model": "m", "messages": messages}).messages)


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_the_latest_user_message_is_the_request_and_the_rest_its_conversation() -> None:
    turn = turn_of(
        [
            {"role": "system", "content": "Be brief."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}],
            },
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Weather in Oslo?"},
        ]
    )
    assert turn.message == "Weather in Oslo?"
    assert turn.conversation == (
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi\nthere"},
        {"role": "assistant", "content": "Hello!"},
    )
    assert turn.results == () and turn.since == ()


def test_results_of_every_round_since_the_request_are_kept_in_order() -> None:
    turn = turn_of(
        [
            {"role": "user", "content": "Old"},
            {"role": "assistant", "tool_calls": [call("a", "f", "{}")]},
            {"role": "tool", "tool_call_id": "a", "content": "old result"},
            {"role": "user", "content": "Oslo and Paris"},
            {"role": "assistant", "tool_calls": [call("b", "w", '{"city": "Oslo"}')]},
            {"role": "tool", "tool_call_id": "b", "content": "3 C"},
            {"role": "assistant", "tool_calls": [call("c", "w", '{"city": "Paris"}')]},
            {"role": "tool", "tool_call_id": "c", "content": "9 C"},
        ]
    )
    assert turn.message == "Oslo and Paris"
    assert [(r.call_id, r.name, r.arguments, r.content) for r in turn.results] == [
        ("b", "w", {"city": "Oslo"}, "3 C"),
        ("c", "w", {"city": "Paris"}, "9 C"),
    ]
    # a call is shown with its result, as a conversation in Python shows it
    assert turn.conversation[-1] == {"role": "tool", "content": "f() returned old result"}
    assert turn.since[0] == {"role": "tool", "content": "w(city='Oslo') returned 3 C"}
    assert turn.rounds == 2


def test_results_may_come_in_any_order_but_each_once() -> None:
    calls = {"role": "assistant", "tool_calls": [call("a", "f", "{}"), call("b", "g", "{}")]}
    user = {"role": "user", "content": "both"}
    turn = turn_of(
        [
            user,
            calls,
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
        ]
    )
    assert [r.name for r in turn.results] == ["g", "f"]
    with pytest.raises(ApiError, match="no such call has id 'a'"):
        turn_of(
            [
                user,
                calls,
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
            ]
        )


def result(*calls: CallRecord, reply: str = "", failure: Failure | None = None) -> Result:
    return Result(reply=reply, strategy="freyr", calls=list(calls), failure=failure)


BOX = toolbox_of(
    [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        }
    ]
)


def test_only_calls_that_passed_the_schema_are_sent_with_coerced_arguments() -> None:
    good = CallRecord(tool="add", arguments={"n": "5"}, outcome=Outcome(ok=True, message="ok"))
    failed = CallRecord(tool="add", arguments={"n": "x"}, outcome=Outcome(ok=False, message="no"))
    choice = choice_of(result(failed, good), BOX, ToolPlan())
    [sent] = choice.message.tool_calls or []
    assert (sent.function.name, sent.function.arguments) == ("add", '{"n": 5}')
    assert choice.finish_reason == "tool_calls" and choice.message.content is None


def test_a_failure_with_nothing_to_send_is_a_502_with_its_kind() -> None:
    failure = Failure(kind="retries", detail="retries exhausted for add")
    failed = CallRecord(tool="add", arguments={}, outcome=Outcome(ok=False, message="no"))
    with pytest.raises(ApiError) as caught:
        choice_of(result(failed, failure=failure), BOX, ToolPlan())
    assert caught.value.status == 502 and caught.value.body.code == "freyr_retries"
    # a reply (the chat role asking for a missing value) is sent even with a failure
    choice = choice_of(result(reply="Which number?", failure=failure), BOX, ToolPlan())
    assert (choice.message.content, choice.finish_reason) == ("Which number?", "stop")


def test_an_assistant_reply_last_is_answered_again_only_under_a_response_format() -> None:
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "tool_calls": [call("c1", "get_weather", '{"city": "Oslo"}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "9 C"},
        {"role": "assistant", "content": "It is 9 C in Oslo."},
    ]
    parsed = ChatRequest.model_validate({"model": "m", "messages": messages}).messages
    turn = read_turn(parsed, again=True)
    assert turn.message == "Weather in Oslo?" and [r.content for r in turn.results] == ["9 C"]
    assert turn.since[-1] == {"role": "assistant", "content": "It is 9 C in Oslo."}
    with pytest.raises(ApiError, match="only to ask for it again in a response_format"):
        read_turn(parsed)
