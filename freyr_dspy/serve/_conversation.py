"""An OpenAI message list read as a program's inputs: the request, earlier turns, tool results.

The latest user message is the request and every message before it is the conversation the
roles see (``role: content`` lines). When the list ends with ``tool`` messages, they are the
results of the calls this server asked for: the summary role reports them. A list the protocol
forbids is refused with the index of the message at fault: a tool message answering no call,
tool calls left unanswered, no user message, or a list that ends with an assistant message -
except an assistant's reply in words under a ``response_format``: that asks for the answer
again, in the format (LangGraph's ``create_react_agent(response_format=...)`` asks so), and
it is answered as the request it replied to, the reply among the turns after the request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.program import call_turn
from freyr_dspy.schemas import CallRecord, Outcome
from freyr_dspy.serve._errors import ApiError, bad_request
from freyr_dspy.serve._protocol import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__all__ = ["Turn", "read_turn"]


@dataclass(frozen=True)
class ToolResult:
    """What the client's execution of one tool call returned."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    content: str


@dataclass(frozen=True)
class Turn:
    """The program's inputs for one request."""

    #: The latest user message.
    message: str
    #: Every turn before it, as ``{"role", "content"}`` dicts.
    conversation: tuple[dict[str, str], ...] = ()
    #: The turns after it: the tool calls made for it and their results.
    since: tuple[dict[str, str], ...] = ()
    #: Results of the tool calls made since that message (empty on a first turn).
    results: tuple[ToolResult, ...] = ()
    #: Rounds of tool calls since that message: the assistant messages that made calls.
    rounds: int = 0

    @property
    def text_size(self) -> int:
        """Characters of text the roles may see (for the context estimate)."""
        turns = (*self.conversation, *self.since)
        return len(self.message) + sum(len(t["content"]) for t in turns)


@dataclass
class _Reading:
    """The state of the scan over the messages."""

    turns: list[dict[str, str]] = field(default_factory=list)
    #: Call id -> call, of the latest assistant message with tool calls, until answered.
    pending: dict[str, ToolCall] = field(default_factory=dict)
    results: list[ToolResult] = field(default_factory=list)
    last_user: int | None = None  # index in ``turns``
    rounds: int = 0  # assistant messages with calls since the last user message


def read_turn(messages: Sequence[Message], *, again: bool = False) -> Turn:
    """Read a validated message list as the program's inputs.

    ``again``: a last assistant message in words asks for the answer again (see above).

    Raises:
        ApiError: 400 for a list the protocol forbids, naming the message at fault.
    """
    reading = _Reading()
    for index, message in enumerate(messages):
        if reading.pending and not isinstance(message, ToolMessage):
            raise _unanswered(reading, index)
        _read(reading, index, message)
    if reading.pending:
        raise _unanswered(reading, len(messages))
    if reading.last_user is None:
        raise bad_request(
            "messages: no user message; send the request as a message with role 'user'",
            param="messages",
        )
    last = messages[-1]
    answered_again = again and isinstance(last, AssistantMessage) and not last.tool_calls
    if not isinstance(last, UserMessage | ToolMessage) and not answered_again:
        raise bad_request(
            f"messages[{len(messages) - 1}]: the last message must be the user's request or "
            f"tool results, not a {last.role} message (an assistant's reply may come last "
            "only to ask for it again in a response_format)",
            param=f"messages[{len(messages) - 1}].role",
        )
    return Turn(
        message=reading.turns[reading.last_user]["content"],
        conversation=tuple(reading.turns[: reading.last_user]),
        since=tuple(reading.turns[reading.last_user + 1 :]),
        results=tuple(reading.results),
        rounds=reading.rounds,
    )


def _read(reading: _Reading, index: int, message: Message) -> None:
    where = f"messages[{index}]"
    if isinstance(message, SystemMessage):
        reading.turns.append({"role": "system", "content": message_text(message.content, where)})
    elif isinstance(message, UserMessage):
        reading.turns.append({"role": "user", "content": message_text(message.content, where)})
        reading.last_user = len(reading.turns) - 1
        reading.results.clear()  # results before this message belong to an earlier request
        reading.rounds = 0
    elif isinstance(message, AssistantMessage):
        _read_assistant(reading, index, message)
    else:
        _read_tool(reading, index, message)


def _read_assistant(reading: _Reading, index: int, message: AssistantMessage) -> None:
    where = f"messages[{index}]"
    text = message_text(message.content, where) if message.content is not None else ""
    calls = message.tool_calls or []
    for number, call in enumerate(calls):
        if call.id in reading.pending:
            raise bad_request(
                f"{where}.tool_calls[{number}]: id {call.id!r} is used twice",
                param=f"{where}.tool_calls[{number}].id",
            )
        _arguments(call, f"{where}.tool_calls[{number}]")  # refuse unreadable arguments now
        reading.pending[call.id] = call
    # NOTE: the calls are shown with their results, one ``tool`` turn each (``_read_tool``),
    # as a conversation in Python shows them (``program.turns_of``).
    reading.rounds += bool(calls)
    if text:
        reading.turns.append({"role": "assistant", "content": text})


def _read_tool(reading: _Reading, index: int, message: ToolMessage) -> None:
    where = f"messages[{index}]"
    call = reading.pending.pop(message.tool_call_id, None)
    if call is None:
        raise bad_request(
            f"{where}: a tool message must answer a tool call of the assistant message "
            f"just before it; no such call has id {message.tool_call_id!r}",
            param=f"{where}.tool_call_id",
        )
    content = message_text(message.content, where)
    name = call.function.name
    arguments = _arguments(call, where)
    reading.results.append(ToolResult(call.id, name, arguments, content))
    made = CallRecord(tool=name, arguments=arguments, outcome=Outcome(ok=True, message=content))
    reading.turns.append({"role": "tool", "content": call_turn(made)})


def _unanswered(reading: _Reading, index: int) -> ApiError:
    ids = ", ".join(reading.pending)
    return bad_request(
        f"messages[{index}]: the assistant's tool calls {ids} must each be answered by a "
        "tool message (with its tool_call_id) before any other message",
        param=f"messages[{index}]",
    )


def _arguments(call: ToolCall, where: str) -> dict[str, Any]:
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        raise bad_request(
            f"{where}: the arguments of {call.function.name} are not a JSON object",
            param=f"{where}.function.arguments",
        )
    return arguments


def message_text(content: str | list[dict[str, Any]], where: str) -> str:
    """The text of a message's content: a string, or its ``text`` parts joined.

    Raises:
        ApiError: 400 for a part that is not text (images and audio are not supported).
    """
    if isinstance(content, str):
        return content
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type")
        if kind != "text" or not isinstance(part.get("text"), str):
            raise bad_request(
                f"{where}.content[{number}]: only text parts are supported, got type {kind!r}",
                param=f"{where}.content[{number}].type",
            )
        texts.append(part["text"])
    return "\n".join(texts)
