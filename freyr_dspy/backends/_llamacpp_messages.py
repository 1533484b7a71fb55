"""Conversion between DSPy/lm15 requests and llama-cpp-python's OpenAI-shaped chat calls.

Requests become chat messages plus completion keyword arguments (sampling, a JSON-schema grammar
for structured output, tools and tool choice); llama.cpp's reply becomes an lm15 ``Response``
with usage, including the prompt tokens the prefix cache saved.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from dspy.lm15 import Message, Request, Response, TextPart, ToolCallPart, Usage

from freyr_dspy.backends._llamacpp_grammar import schema_grammar
from freyr_dspy.prompting import load_json

__all__ = ["completion_kwargs", "to_openai_messages", "to_response"]

_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
}


def to_openai_messages(request: Request) -> list[dict[str, Any]]:
    """Convert a DSPy/lm15 request into OpenAI-style chat messages."""
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        system = (
            request.system
            if isinstance(request.system, str)
            else "".join(getattr(p, "text", "") for p in request.system)
        )
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        messages.extend(_convert_message(message))
    return messages


def _convert_message(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": part.id,
                "content": "".join(getattr(c, "text", "") for c in part.content),
            }
            for part in message.parts
            if getattr(part, "type", "") == "tool_result"
        ]
    calls = [p for p in message.parts if getattr(p, "type", "") == "tool_call"]
    converted: dict[str, Any] = {
        "role": "system" if message.role == "developer" else message.role,
        "content": message.text or "",
    }
    if calls:
        converted["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.input)},
            }
            for c in calls
        ]
    return [converted]


def completion_kwargs(
    request: Request, default_seed: int, *, compact: bool = False
) -> dict[str, Any]:
    """Map the request's sampling, output format and tools to ``create_chat_completion``.

    ``compact`` asks for a JSON answer on one line; an indented answer in the prompt (a
    JSON adapter's demo) overrides it.
    """
    compact = compact and not _shows_indented_answers(request)
    config = request.config
    kwargs: dict[str, Any] = {
        "temperature": 0.0 if config.temperature is None else config.temperature,
        "seed": default_seed if config.seed is None else config.seed,
        "max_tokens": config.max_tokens or 512,
    }
    if config.top_p is not None:
        kwargs["top_p"] = config.top_p
    if config.top_k is not None:
        kwargs["top_k"] = config.top_k
    if config.stop:
        kwargs["stop"] = list(config.stop)
    if config.response_format:
        kwargs.update(_structured_output(config.response_format, compact=compact))
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
        kwargs["tool_choice"] = _tool_choice(request)
    return kwargs


def _shows_indented_answers(request: Request) -> bool:
    """Tell whether an earlier assistant message (a demo) spans several lines."""
    return any(m.role == "assistant" and "\n" in (m.text or "") for m in request.messages)


def _grammar_format(response_format: dict[str, Any]) -> dict[str, Any]:
    """Translate OpenAI ``json_schema`` formats to llama.cpp's grammar-backed form."""
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", response_format).get("schema")
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    return dict(response_format)


def _structured_output(response_format: dict[str, Any], *, compact: bool = False) -> dict[str, Any]:
    """Constrain the output to the response format's JSON schema with a llama.cpp grammar.

    ``compact`` keeps the JSON on one line: what the lean adapter's demos show, and the
    fewest tokens to generate. Indented answers in the prompt (DSPy's JSON adapter writes its
    demos so) need it off: a model imitating them, refused the line break, closed its lists.

    A schema with no grammar llama.cpp takes (see ``schema_grammar``) gets plain JSON mode, as
    without a schema; the roles' parsers read what comes.
    """
    fmt = _grammar_format(response_format)
    if not fmt.get("schema"):
        return {"response_format": fmt}
    gbnf = schema_grammar(json.dumps(fmt["schema"]), compact=compact)
    if gbnf is None:
        return {"response_format": {"type": "json_object"}}
    from llama_cpp.llama_grammar import LlamaGrammar

    return {"grammar": LlamaGrammar.from_string(gbnf, verbose=False)}


def _tool_choice(request: Request) -> Any:
    """Force one function when exactly one is allowed; llama.cpp parses calls only then."""
    choice = request.config.tool_choice
    if choice is not None and len(choice.allowed) == 1:
        return {"type": "function", "function": {"name": choice.allowed[0]}}
    if len(request.tools) == 1 and (choice is None or choice.mode == "required"):
        return {"type": "function", "function": {"name": request.tools[0].name}}
    return "auto" if choice is None else choice.mode


def to_response(raw: dict[str, Any], model: str, *, evaluated: int | None = None) -> Response:
    """Convert llama.cpp's reply; ``evaluated`` prompt tokens (the rest came from the cache)."""
    choice = raw["choices"][0]
    message = choice["message"]
    parts: list[Any] = []
    if message.get("content"):
        parts.append(TextPart(message["content"]))
    for call in message.get("tool_calls") or []:
        arguments = call["function"].get("arguments") or "{}"
        parsed = load_json(arguments, default={}) if isinstance(arguments, str) else arguments
        parts.append(
            ToolCallPart(
                call.get("id") or uuid.uuid4().hex,
                call["function"]["name"],
                parsed if isinstance(parsed, dict) else {},
            )
        )
    if not parts:
        parts.append(TextPart(""))
    usage = raw.get("usage") or {}
    sent = int(usage.get("prompt_tokens", 0))
    return Response(
        id=raw.get("id") or None,
        model=model,
        message=Message.assistant(parts),
        finish_reason=_FINISH.get(choice.get("finish_reason") or "stop", "stop"),  # type: ignore[arg-type]
        usage=Usage(
            input_tokens=sent,
            # NOTE: reported like a provider's prompt cache, so DSPy's usage tracking carries it.
            cache_read_tokens=None if evaluated is None else max(sent - evaluated, 0),
            output_tokens=int(usage.get("completion_tokens", 0)),
            total_tokens=int(usage.get("total_tokens", 0)),
        ),
    )
