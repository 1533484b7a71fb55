"""Free tool choice on llama.cpp: the model decides which tools to call, if any.

llama-cpp-python parses tool calls only when one tool is forced, so a free choice needs help.
Two ways, chosen per model (``LlamaCppEngine.tool_chat_format``):

* ``template``: render the tools with the model's own chat template (Qwen2.5 and other
  Hermes-style templates list them in ``<tools>`` and ask for ``<tool_call>{json}</tool_call>``)
  and parse those blocks from the reply. This is how such models were trained to call tools.
* any llama.cpp handler name (``chatml-function-calling``): that handler's own prompt and grammar.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from freyr_dspy.prompting import load_json

__all__ = [
    "TEMPLATE_TOOLS",
    "choose_with_handler",
    "choose_with_template",
    "parse_tool_calls",
    "tool_results_as_user",
]

#: ``tool_chat_format`` value for models whose chat template renders tools itself.
TEMPLATE_TOOLS = "template"

#: Output constraints of the text-only reply: a free tool choice decides its own format (a JSON
#: grammar for the reply fields would forbid the tool calls).
_OWN_FORMAT = ("tool_choice", "response_format", "grammar")

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


def choose_with_template(
    llama: Any, messages: list[dict[str, Any]], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """Let the model's own template offer the tools; parse ``<tool_call>`` blocks from its reply."""
    kwargs = {k: v for k, v in kwargs.items() if k not in _OWN_FORMAT}
    raw: dict[str, Any] = llama.create_chat_completion(
        messages=_arguments_as_objects(messages), tool_choice="auto", **kwargs
    )
    message = raw["choices"][0]["message"]
    names = {tool["function"]["name"] for tool in kwargs.get("tools") or []}
    text, calls = parse_tool_calls(message.get("content") or "", names)
    if calls:
        message["content"] = text or None
        message["tool_calls"] = calls
        raw["choices"][0]["finish_reason"] = "tool_calls"
    return raw


def parse_tool_calls(text: str, names: set[str]) -> tuple[str, list[dict[str, Any]]]:
    """Split a reply into its prose and its tool calls (OpenAI shape, arguments as JSON text).

    ``<tool_call>`` blocks are read tolerantly (a missing closing tag, broken JSON). Without
    them, a ``{"name": ..., "arguments": ...}`` object (or a list of them, fenced or bare) that
    names a known tool counts too: small models often drop the tags and write a JSON block.
    """
    blocks = _TOOL_CALL.findall(text)
    if blocks:
        calls = [call for block in blocks if (call := _read_call(block)) is not None]
        return _TOOL_CALL.sub("", text).strip(), calls
    for candidate in _json_candidates(text):
        items = _load_json_or_empty(candidate)
        items = items if isinstance(items, list) else [items]
        calls = [call for item in items if (call := _read_call(item)) is not None]
        if calls and all(call["function"]["name"] in names for call in calls):
            return _EMPTY_FENCE.sub("", text.replace(candidate, "")).strip(), calls
    return text, []


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_EMPTY_FENCE = re.compile(r"```(?:json)?\s*```")


def _json_candidates(text: str) -> list[str]:
    """Fenced blocks first, then the span from the first bracket to the last."""
    candidates = [m.strip() for m in _FENCE.findall(text)]
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        candidates.append(text[min(starts) : max(text.rfind("}"), text.rfind("]")) + 1])
    return [c for c in candidates if c]


def _read_call(block: str | Any) -> dict[str, Any] | None:
    data = _load_json_or_empty(block) if isinstance(block, str) else block
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # some models encode the arguments object as a string
        arguments = _load_json_or_empty(arguments)
    return {
        "id": f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {
            "name": data["name"],
            "arguments": json.dumps(arguments if isinstance(arguments, dict) else {}),
        },
    }


def _load_json_or_empty(text: str) -> Any:
    """Model JSON read tolerantly (``parsing.load_json``); unreadable text gives ``{}``."""
    return load_json(text, default={})


def _arguments_as_objects(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give earlier tool calls' arguments as objects: Qwen's template serialises them itself."""
    converted = []
    for message in messages:
        if message.get("tool_calls"):
            calls = [
                {**c, "function": {**c["function"], "arguments": _load_json_or_empty(a)}}
                if isinstance(a := c["function"].get("arguments"), str)
                else c
                for c in message["tool_calls"]
            ]
            message = {**message, "tool_calls": calls}
        converted.append(message)
    return converted


def choose_with_handler(
    llama: Any, handler_name: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """Let a llama.cpp tool-aware chat handler (e.g. ``chatml-function-calling``) choose."""
    from llama_cpp import llama_chat_format

    handler = llama_chat_format.get_chat_completion_handler(handler_name)
    llama.set_seed(kwargs.pop("seed"))
    kwargs = {k: v for k, v in kwargs.items() if k not in _OWN_FORMAT}
    kwargs["tool_choice"] = "auto"
    # NOTE: the handler asks for arguments with max_tokens=None (up to n_ctx); cap each of its
    # completions, or a rambling small model runs for minutes.
    cap, original = kwargs["max_tokens"], llama.create_completion
    llama.create_completion = lambda *a, **k: original(
        *a, **{**k, "max_tokens": k.get("max_tokens") or cap}
    )
    try:
        raw: dict[str, Any] = handler(
            llama=llama, messages=tool_results_as_user(messages), **kwargs
        )
    finally:
        llama.create_completion = original
    return raw


def tool_results_as_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn tool results into user turns: llama.cpp's tool handlers drop ``tool`` messages."""
    names = {
        call["id"]: call["function"]["name"] for m in messages for call in m.get("tool_calls") or []
    }
    converted = []
    for m in messages:
        if m["role"] == "tool":
            name = names.get(m.get("tool_call_id"), "tool")
            m = {"role": "user", "content": f"Result of functions.{name}: {m.get('content', '')}"}
        converted.append(m)
    return converted
