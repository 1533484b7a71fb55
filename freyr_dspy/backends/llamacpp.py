"""A DSPy custom engine that runs a GGUF model in-process with llama-cpp-python.

DSPy 3.4 keeps its cache, history, callbacks and usage tracking around an engine object
(``complete(Request) -> Response``); this is the only module that knows that contract for
llama.cpp. One engine per GGUF file is shared by every role's LM (``lm.copy()`` shares it
too), and a lock serialises calls because a ``Llama`` object is not thread-safe.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import json_repair
from dspy.lm15 import Message, Request, Response, TextPart, ToolCallPart, Usage, response_to_events

from freyr_dspy.errors import ToolUnsupportedError

logger = logging.getLogger(__name__)

#: Context window used for every embedded model: DSPy prompts with demos need more than 512.
DEFAULT_N_CTX = 4096

_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
}


class LlamaCppEngine:
    """Serve ``dspy.LM`` requests from a local GGUF file through llama-cpp-python.

    Args:
        model_path: the GGUF file.
        n_ctx: context window in tokens (≥ 4096 for DSPy prompts with demos).
        n_threads: CPU threads; None uses every core (llama-cpp-python's own default is half
            of them, which makes generation ~1.6x slower on a 2-core machine).
        seed: default sampling seed, so runs are reproducible.
        chat_format: llama.cpp chat format; None uses the GGUF's own template.
        tool_chat_format: llama.cpp handler used when the model must choose among several
            tools itself (e.g. ``chatml-function-calling`` for ChatML models); None means
            this model cannot (a ``ToolUnsupportedError`` says so).
    """

    supports_function_calling = True
    supports_response_schema = True
    supported_params = (
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
        "tools",
        "tool_choice",
    )

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        tool_chat_format: str | None = None,
    ) -> None:
        self.model_path = str(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.chat_format = chat_format
        self.tool_chat_format = tool_chat_format
        self._llama: Any = None
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> LlamaCppEngine:
        # One engine per GGUF: program.deepcopy() (optimizers) must share it, not copy it.
        return self

    def _model(self) -> Any:
        # NOTE: loaded lazily so that building a program (or listing models) costs nothing.
        if self._llama is None:
            from llama_cpp import Llama

            logger.info("loading %s (n_ctx=%d)", self.model_path, self.n_ctx)
            self._llama = Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or os.cpu_count(),
                seed=self.seed,
                chat_format=self.chat_format,
                verbose=False,
            )
        return self._llama

    def complete(self, request: Request) -> Response:
        """Run one chat completion and convert it to a DSPy ``Response``."""
        kwargs = _completion_kwargs(request, self.seed)
        messages = to_openai_messages(request)
        with self._lock:
            if kwargs.get("tools") and kwargs.get("tool_choice") in ("auto", "required"):
                raw = self._choose_tools(messages, kwargs, request.model)
            else:
                raw = self._model().create_chat_completion(messages=messages, **kwargs)
        return _to_response(raw, request.model)

    def _choose_tools(
        self, messages: list[dict[str, Any]], kwargs: dict[str, Any], model: str
    ) -> dict[str, Any]:
        """Let the model pick tools itself through the tool-aware chat handler.

        NOTE: llama.cpp's default handler parses tool calls only when one tool is forced,
        so a free choice needs a handler that matches the model's template.

        Raises:
            ToolUnsupportedError: when this model has no tool-aware chat format.
        """
        if self.tool_chat_format is None:
            raise ToolUnsupportedError(
                "this embedded model cannot choose among tools natively (llama.cpp parses "
                "tool calls only when one tool is forced); use a strategy that selects the "
                "tool first, such as freyr",
                model=model,
            )
        from llama_cpp import llama_chat_format

        handler = llama_chat_format.get_chat_completion_handler(self.tool_chat_format)
        llama = self._model()
        llama.set_seed(kwargs.pop("seed"))
        kwargs.pop("response_format", None)  # the handler's own grammar decides the format
        kwargs["tool_choice"] = "auto"
        # NOTE: the handler asks for arguments with max_tokens=None (up to n_ctx); cap each
        # of its completions, or a rambling small model runs for minutes.
        cap, original = kwargs["max_tokens"], llama.create_completion
        llama.create_completion = lambda *a, **k: original(
            *a, **{**k, "max_tokens": k.get("max_tokens") or cap}
        )
        try:
            raw: dict[str, Any] = handler(
                llama=llama, messages=_tool_results_as_user(messages), **kwargs
            )
        finally:
            llama.create_completion = original
        return raw

    def stream(self, request: Request) -> Any:
        """Stream as a single delta (DSPy only needs the events' shape)."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Release the model."""
        with self._lock:
            self._llama = None

    def count_tokens(self, text: str) -> int:
        """Count the tokens of ``text`` with this model's tokenizer."""
        with self._lock:
            return len(self._model().tokenize(text.encode(), add_bos=False))

    def dump_state(self) -> dict[str, Any]:
        """Record how to rebuild the engine (used when a program is saved with LMs attached)."""
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
            "tool_chat_format": self.tool_chat_format,
        }

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> LlamaCppEngine:
        """Rebuild an engine from ``dump_state`` output."""
        return cls(
            state["model_path"],
            n_ctx=state.get("n_ctx", DEFAULT_N_CTX),
            seed=state.get("seed", 0),
            tool_chat_format=state.get("tool_chat_format"),
        )


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


def _tool_results_as_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def _completion_kwargs(request: Request, default_seed: int) -> dict[str, Any]:
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
        kwargs.update(_structured_output(config.response_format))
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


def _grammar_format(response_format: dict[str, Any]) -> dict[str, Any]:
    """Translate OpenAI ``json_schema`` formats to llama.cpp's grammar-backed form."""
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", response_format).get("schema")
        return {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
    return dict(response_format)


def _structured_output(response_format: dict[str, Any]) -> dict[str, Any]:
    """Constrain the output to the response format's JSON schema with a llama.cpp grammar.

    NOTE: llama-cpp-python's schema converter allows at most one space between tokens, but
    DSPy writes few-shot demos as indented JSON; a model imitating them is then pushed into
    `[ ]` (compiled programs answered empty lists). Newlines and indentation are allowed here.
    """
    fmt = _grammar_format(response_format)
    if not fmt.get("schema"):
        return {"response_format": fmt}
    from llama_cpp.llama_grammar import LlamaGrammar

    return {
        "grammar": LlamaGrammar.from_string(_schema_gbnf(json.dumps(fmt["schema"])), verbose=False)
    }


@functools.lru_cache(maxsize=64)
def _schema_gbnf(schema: str) -> str:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return re.sub(r"^space ::= .*$", lambda _: _SPACE_RULE, json_schema_to_gbnf(schema), flags=re.M)


_SPACE_RULE = r'space ::= | " " | "\n" [ \t]{0,20}'


def _tool_choice(request: Request) -> Any:
    """Force one function when exactly one is allowed; llama.cpp parses calls only then."""
    choice = request.config.tool_choice
    if choice is not None and len(choice.allowed) == 1:
        return {"type": "function", "function": {"name": choice.allowed[0]}}
    if len(request.tools) == 1 and (choice is None or choice.mode == "required"):
        return {"type": "function", "function": {"name": request.tools[0].name}}
    return "auto" if choice is None else choice.mode


def _to_response(raw: dict[str, Any], model: str) -> Response:
    choice = raw["choices"][0]
    message = choice["message"]
    parts: list[Any] = []
    if message.get("content"):
        parts.append(TextPart(message["content"]))
    for call in message.get("tool_calls") or []:
        arguments = call["function"].get("arguments") or "{}"
        parsed = json_repair.loads(arguments) if isinstance(arguments, str) else arguments
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
    return Response(
        id=raw.get("id") or None,
        model=model,
        message=Message.assistant(parts),
        finish_reason=_FINISH.get(choice.get("finish_reason") or "stop", "stop"),  # type: ignore[arg-type]
        usage=Usage(
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
            total_tokens=int(usage.get("total_tokens", 0)),
        ),
    )
