"""``prompted``: tool calling by prompt injection (He 2024), for models without native tools.

The tool list and a JSON reply format are appended to the system prompt (the signature's
instructions) on every call; the model answers with ``{"tool": ..., "parameters": {...}}``
objects or with plain text for the user. A tolerant extractor reads the calls out of
whatever came back: fenced or bare JSON, Python-style quotes, synonyms such as
``name``/``arguments``, several calls, calls wrapped in another object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import dspy

from freyr_dspy.prompting import MAX_NESTED_JSON, Contract, load_json, parse_text
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._registry import register_role

__all__ = ["CALL_FORMAT", "ToolRequest", "extract_calls"]

_TOOL_KEYS = ("tool", "name", "tool_name", "function", "function_name", "action")
_ARGUMENT_KEYS = ("parameters", "arguments", "args", "params", "input", "action_input")

#: Appended to the instructions with the tool list, so optimizers can rewrite the rest.
CALL_FORMAT = """\
To call a tool, answer with only a JSON object, one per line for several tools:
{"tool": "<tool name>", "parameters": {"<parameter>": <value>}}
Use {} as parameters for a tool without parameters. Each call's result comes back as an
observation. When no further tool is needed, answer the user in plain text, without JSON."""


class PromptedSignature(dspy.Signature):
    """Answer the user's latest message, calling the available tools when they help."""

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    observations: str = dspy.InputField(
        desc="the tool calls already made for this message and their results, or 'none'"
    )
    response: str = dspy.OutputField(
        desc='JSON tool calls {"tool": ..., "parameters": {...}}, or the final answer'
    )


@dataclass(frozen=True)
class ToolRequest:
    """One call the model asked for."""

    tool: str
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """The extracted calls and the plain text around them (the answer when there are none)."""

    calls: tuple[ToolRequest, ...] = ()
    text: str = ""


def extract_calls(value: Any) -> Reply:
    """Extract ``{"tool": ..., "parameters": {...}}`` calls from a model reply.

    Args:
        value: the reply as text, or an object the adapter already parsed.

    Returns:
        The calls in order of appearance and the remaining text.
    """
    if isinstance(value, dict | list):
        return Reply(tuple(_calls_in(value, nested=0)), "")
    text = str(value or "")
    calls: list[ToolRequest] = []
    remaining: list[str] = []
    position = 0
    for start, end, obj in _json_objects(text):
        found = _calls_in(obj, nested=1)
        if found:
            calls.extend(found)
            remaining.append(text[position:start])
            position = end
    remaining.append(text[position:])
    rest = re.sub(r"```[a-zA-Z]*", "", "".join(remaining)).strip()
    return Reply(tuple(calls), rest if calls else parse_text(text))


def _json_objects(text: str) -> list[tuple[int, int, Any]]:
    """Find top-level ``{...}`` spans (balanced braces) and parse each leniently."""
    spans: list[tuple[int, int, Any]] = []
    depth, start, quote = 0, -1, ""
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote and text[i - 1] != "\\" else quote
        elif char in "\"'" and depth:
            quote = char
        elif char == "{":
            start = i if depth == 0 else start
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1, load_json(text[start : i + 1])))
    if depth and start >= 0:  # a truncated last object: let json_repair close it
        spans.append((start, len(text), load_json(text[start:])))
    return spans


def _calls_in(obj: Any, *, nested: int) -> list[ToolRequest]:
    """Find call-shaped dicts in a parsed object, looking inside wrappers and lists.

    ``nested`` counts the JSON texts parsed on the way to ``obj`` (see ``MAX_NESTED_JSON``).
    """
    if isinstance(obj, list):
        return [call for item in obj for call in _calls_in(item, nested=nested)]
    if not isinstance(obj, dict):
        return []
    name = next((obj[k] for k in _TOOL_KEYS if isinstance(obj.get(k), str) and obj[k]), None)
    if name is not None:
        return [ToolRequest(name.strip(), _arguments(obj))]
    if isinstance(obj.get("function"), dict):  # OpenAI shape {"function": {"name", "arguments"}}
        return _calls_in(obj["function"], nested=nested)
    return [
        call
        for value in obj.values()
        if isinstance(value, dict | list | str)
        for call in _calls_in_value(value, nested)
    ]


def _calls_in_value(value: Any, nested: int) -> list[ToolRequest]:
    """Find calls in a value, parsing JSON objects written inside a string (a bounded depth)."""
    if isinstance(value, str) and "{" in value and nested <= MAX_NESTED_JSON:
        return _calls_in([obj for _, _, obj in _json_objects(value)], nested=nested + 1)
    return _calls_in(value, nested=nested)


def _arguments(obj: dict[str, Any]) -> dict[str, Any]:
    for key in _ARGUMENT_KEYS:
        value = obj.get(key)
        if isinstance(value, str):
            value = load_json(value) if value.strip().startswith("{") else None
        if isinstance(value, dict):
            return value
    return {}


def with_tools(signature: type[dspy.Signature], tools: str) -> type[dspy.Signature]:
    """Return ``signature`` with the call format and the tool list added to its instructions."""
    instructions = (
        f"{signature.instructions.rstrip()}\n\n{CALL_FORMAT}\n\nAvailable tools:\n{tools}"
    )
    return signature.with_instructions(instructions)


class PromptedCaller(Role):
    """Write JSON tool calls or the final answer, with the tools in the system prompt."""

    signature = PromptedSignature

    def forward(self, contract: Contract | None = None, **inputs: Any) -> dspy.Prediction:
        """Run the predictor with ``tools`` (the rendered catalog) put into the instructions."""
        tools = str(inputs.pop("tools", ""))
        signature = with_tools(self.predict.signature, tools)
        return super().forward(contract, signature=signature, **inputs)

    def use_instructions(self, instructions: str) -> None:
        """Replace the role's own instructions (the call format and tools are still added)."""
        self.predict.signature = self.predict.signature.with_instructions(instructions)

    def parse_raw(self, text: str) -> dict[str, Any]:
        """The whole raw text is the response; the extractor reads it later."""
        return {"response": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the response as text (objects the adapter parsed are written back as JSON)."""
        value = outputs.get("response")
        if isinstance(value, dict | list):
            value = json.dumps(value)
        return {"response": str(value or "")}


register_role("prompted", PromptedCaller)
