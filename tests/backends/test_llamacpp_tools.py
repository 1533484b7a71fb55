"""Free tool choice on llama.cpp: reading tool calls from a model's reply (no model loaded)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from freyr_dspy.backends._llamacpp_tools import choose_with_template, parse_tool_calls

NAMES = {"add_task", "get-weather", "math.hypot"}


def calls_of(text: str) -> list[tuple[str, dict[str, Any]]]:
    _prose, calls = parse_tool_calls(text, NAMES)
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '<tool_call>\n{"name": "add_task", "arguments": {"title": "milk"}}\n</tool_call>',
            [("add_task", {"title": "milk"})],
        ),
        # two blocks, the second unclosed (cut by max_tokens)
        (
            '<tool_call>{"name": "add_task", "arguments": {"title": "a"}}</tool_call>\n'
            '<tool_call>{"name": "math.hypot", "arguments": {"x": 3, "y": 4',
            [("add_task", {"title": "a"}), ("math.hypot", {"x": 3, "y": 4})],
        ),
        # fenced JSON without tags, arguments encoded as a string
        (
            '```json\n{"name": "get-weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}\n```',
            [("get-weather", {"city": "Oslo"})],
        ),
        # a bare list of calls, "parameters" instead of "arguments"
        (
            '[{"name": "add_task", "parameters": {"title": "x"}}, {"name": "add_task"}]',
            [("add_task", {"title": "x"}), ("add_task", {})],
        ),
    ],
)
def test_tool_calls_are_read_tolerantly(reply: str, expected: list[Any]) -> None:
    assert calls_of(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, I added it.",
        '{"response": "done"}',  # JSON, but not a call
        '```json\n{"name": "delete_everything", "arguments": {}}\n```',  # untagged unknown name
        "[" * 5000,  # absurd nesting must not crash
        '{"a":' * 300,
    ],
)
def test_text_that_is_no_call_stays_the_reply(reply: str) -> None:
    prose, calls = parse_tool_calls(reply, NAMES)
    assert calls == [] and prose == reply


def test_a_tagged_unknown_tool_is_kept_for_the_program_to_refuse() -> None:
    assert calls_of('<tool_call>{"name": "nope", "arguments": {}}</tool_call>') == [("nope", {})]


def test_prose_around_the_calls_is_kept() -> None:
    prose, calls = parse_tool_calls(
        'Adding it now.\n<tool_call>{"name": "add_task", "arguments": {}}</tool_call>', NAMES
    )
    assert prose == "Adding it now." and len(calls) == 1


class TemplateLlama:
    """Records what ``choose_with_template`` sends; replies with one tagged call."""

    def __init__(self) -> None:
        self.kwargs: dict[str, Any] = {}

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.kwargs = kwargs
        content = '<tool_call>{"name": "add_task", "arguments": {"title": "milk"}}</tool_call>'
        return {
            "choices": [
                {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def test_template_choice_sends_tools_without_an_output_grammar() -> None:
    llama = TemplateLlama()
    tools = [{"type": "function", "function": {"name": "add_task", "parameters": {}}}]
    earlier = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": "add_task", "arguments": '{"title": "a"}'},
            }
        ],
    }
    raw = choose_with_template(
        llama,
        [{"role": "user", "content": "add milk"}, earlier],
        {"tools": tools, "grammar": object(), "response_format": {}, "max_tokens": 9},
    )
    assert "grammar" not in llama.kwargs and "response_format" not in llama.kwargs
    assert llama.kwargs["tools"] == tools and llama.kwargs["max_tokens"] == 9
    # Qwen's template serialises earlier arguments itself: they go as objects
    assert llama.kwargs["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"title": "a"}
    message = raw["choices"][0]["message"]
    assert raw["choices"][0]["finish_reason"] == "tool_calls" and message["content"] is None
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"title": "milk"}
