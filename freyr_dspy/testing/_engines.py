"""The fake engines: strict, deterministic stand-ins for a model, answering in DSPy's formats.

A fake plugs into DSPy as a custom engine, reads the role and the input fields out of the
prompt DSPy built, and answers through the active adapter's format, so parsing is exercised
for real. It is strict: a call its script does not cover raises ``FakeLMError`` with an
excerpt of the prompt. Two forms: ``ScriptedLM`` (a table) and ``FunctionLM`` (a callable).
``make_lm("fake/<name>")`` returns the fake registered under ``<name>``. While a text listener
is installed (``freyr_dspy.text_stream``), a fake feeds it its answer in pieces of a few
characters, as a streaming model would.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.lm15 import Message, Request, Response, TextPart, ToolCallPart, Usage, response_to_events

from freyr_dspy.errors import FakeLMError
from freyr_dspy.prompting import CONTEXT_PLACEHOLDERS
from freyr_dspy.text_stream import TextListener, text_listener

__all__ = [
    "Answer",
    "FakeCall",
    "FakeEngine",
    "FunctionLM",
    "ScriptedLM",
    "format_outputs",
    "read_call",
]

__test__ = False  # not a test module, whatever pytest's collection rules say

_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]\n?(.*?)(?=\n*\[\[ ## \w+ ## \]\]|\Z)", re.S)
#: The lean adapter's ``<name>\nvalue\n</name>`` sections.
_TAGGED = re.compile(r"^<(\w+)>\n(.*?)\n</\1>$", re.S | re.M)
#: Characters per piece of a streamed answer (about a token's worth).
PIECE_CHARS = 4

Answer = Mapping[str, Any] | str


@dataclass(frozen=True)
class FakeCall:
    """One call a fake received: which model, which role, with which input fields."""

    model: str
    role: str
    inputs: Mapping[str, str]
    tools: tuple[str, ...] = ()
    prompt: str = field(default="", repr=False)
    #: The request's generation config (temperature, top_p, max_tokens, seed, ...).
    config: Any = field(default=None, repr=False, compare=False)


class FakeEngine:
    """Base engine: subclasses implement ``answer(call)``; records every call in ``calls``.

    ``structured_output=True`` makes it claim, like llama.cpp or OpenAI, that it constrains its
    output to a JSON schema: adapters then send ``response_format`` (recorded in each call's
    ``config``). A fake never enforces it; it answers what it was told to.

    ``between_pieces`` is called before each piece of a streamed answer after the first, so a
    test can hold a stream halfway (and see what arrived before the answer was finished).
    """

    supports_function_calling = True
    supports_response_schema = False
    supported_params: tuple[str, ...] = (
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "seed",
        "tools",
        "tool_choice",
        "stop",
    )

    def __init__(
        self,
        *,
        structured_output: bool = False,
        between_pieces: Callable[[], None] | None = None,
    ) -> None:
        self.calls: list[FakeCall] = []
        self.between_pieces = between_pieces
        self._lock = threading.Lock()
        if structured_output:
            self.supports_response_schema = True
            self.supported_params = (*type(self).supported_params, "response_format")

    def __deepcopy__(self, memo: dict[int, Any]) -> FakeEngine:
        # Shared, like lm.copy() shares it: program.deepcopy() (optimizers) keeps one engine.
        return self

    def answer(self, call: FakeCall) -> Answer:
        """Return the output fields (or raw text) for one call."""
        raise NotImplementedError

    def complete(self, request: Request) -> Response:
        """Answer one DSPy request in the active adapter's format."""
        call = read_call(request)
        with self._lock:
            self.calls.append(call)
        answer = self.answer(call)
        parts = _answer_parts(answer, request)
        text = "".join(p.text for p in parts if isinstance(p, TextPart))
        listener = None if request.tools else text_listener()
        if listener is not None:
            self._stream(text, listener)
        return Response(
            id=None,
            model=request.model,
            message=Message.assistant(parts),
            finish_reason="stop",
            usage=Usage(
                input_tokens=_count(call.prompt),
                output_tokens=max(_count(text), 1),
                total_tokens=_count(call.prompt) + max(_count(text), 1),
            ),
        )

    def _stream(self, text: str, listener: TextListener) -> None:
        """Feed ``text`` to ``listener`` in pieces of ``PIECE_CHARS`` characters."""
        for start in range(0, len(text), PIECE_CHARS):
            if start and self.between_pieces is not None:
                self.between_pieces()
            listener(text[start : start + PIECE_CHARS])

    def stream(self, request: Request) -> Any:
        """Stream as one delta."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release."""

    def roles_called(self) -> list[str]:
        """The roles of the recorded calls, in order."""
        return [c.role for c in self.calls]


class ScriptedLM(FakeEngine):
    """A fake answering from a table: ``{role: {substring or "*": answer}}``.

    The first key found in the call's ``message`` input (or in the whole prompt) wins; ``*``
    matches anything. An answer is a dict of output fields or a raw string (to test parsing
    of malformed output).
    """

    def __init__(
        self,
        table: Mapping[str, Mapping[str, Answer]],
        *,
        structured_output: bool = False,
        between_pieces: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(structured_output=structured_output, between_pieces=between_pieces)
        self.table = table

    def answer(self, call: FakeCall) -> Answer:
        """Look the call up in the table; raise ``FakeLMError`` when it is not scripted."""
        entries = self.table.get(call.role, {})
        text = call.inputs.get("message", call.prompt)
        for key, answer in entries.items():
            if key == "*" or key.lower() in text.lower():
                return answer
        raise FakeLMError(
            f"unscripted call to role {call.role!r}; prompt starts: {call.prompt[-300:]!r}"
        )


class FunctionLM(FakeEngine):
    """A fake whose answers come from ``fn(call)``; ``fn`` raises or returns an answer."""

    def __init__(
        self,
        fn: Callable[[FakeCall], Answer | None],
        *,
        structured_output: bool = False,
        between_pieces: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(structured_output=structured_output, between_pieces=between_pieces)
        self.fn = fn

    def answer(self, call: FakeCall) -> Answer:
        """Ask the function; a ``None`` answer is an unscripted call."""
        answer = self.fn(call)
        if answer is None:
            raise FakeLMError(f"unscripted call to role {call.role!r}: {call.prompt[-300:]!r}")
        return answer


def read_call(request: Request) -> FakeCall:
    """Recover the role and input fields from a prompt built by a DSPy adapter."""
    system = (
        request.system
        if isinstance(request.system, str)
        else "".join(getattr(p, "text", "") for p in (request.system or ()))
    )
    # NOTE: the adapter's closing "Respond with ..." line names the output markers too, and a
    # call continuing a tool-calling history has no fields of its own: the request is the last
    # user turn that has some.
    users = [
        (m.text or "").split("Respond with", 1)[0] for m in request.messages if m.role == "user"
    ]
    inputs = next((found for t in reversed(users) if (found := _input_sections(t))), {})
    # The lean adapter moves a request's static inputs (its catalog) into the system message
    # when a pool chose its demos (``LeanAdapter.format``).
    moved = {name: value.strip() for name, value in _TAGGED.findall(system)}
    inputs = {**moved, **inputs}
    prompt = system + "\n" + "\n".join(m.text or "" for m in request.messages)
    role = _identify_role(system, inputs)
    return FakeCall(
        model=request.model,
        role=role,
        inputs=_with_left_out_inputs(role, inputs),
        tools=tuple(t.name for t in request.tools),
        prompt=prompt,
        config=request.config,
    )


def _input_sections(text: str) -> dict[str, str]:
    """The input fields of one user turn, in DSPy's ``[[ ## name ## ]]`` or the lean format."""
    sections = _SECTION.findall(text) if "[[ ## " in text else _TAGGED.findall(text)
    return {name: value.strip() for name, value in sections}


def _identify_role(system: str, inputs: Mapping[str, str]) -> str:
    """Find the registered role whose input and output fields the prompt names."""
    from freyr_dspy.roles import load_roles

    flat_system = " ".join(system.split())
    best, best_rank = "", (False, 0)
    for name, module in load_roles().items():
        signature = module.signature
        shown = {n for n, f in signature.input_fields.items() if not _native_field(f.annotation)}
        outputs = {n for n, f in signature.output_fields.items() if not _native_field(f.annotation)}
        # The lean prompt leaves out context inputs that hold nothing (``says_nothing``).
        fits = set(inputs) <= shown <= set(inputs) | set(CONTEXT_PLACEHOLDERS)
        if fits and all(f"`{o}`" in system or f'"{o}"' in system for o in outputs):
            # Roles with the same fields are told apart by their instructions (when not compiled).
            rank = (" ".join(signature.instructions.split()) in flat_system, len(outputs))
            if rank > best_rank:
                best, best_rank = name, rank
    return best


def _with_left_out_inputs(role: str, inputs: dict[str, str]) -> dict[str, str]:
    """The inputs, each context input the lean prompt left out read as its placeholder."""
    from freyr_dspy.roles import load_roles

    module = load_roles().get(role)
    if module is None:
        return inputs
    fields = module.signature.input_fields
    return {
        **inputs,
        **{
            name: placeholder
            for name, placeholder in CONTEXT_PLACEHOLDERS.items()
            if name in fields and name not in inputs
        },
    }


def _native_field(annotation: Any) -> bool:
    """Fields DSPy keeps out of the prompt under native tool calling (history, tools, calls)."""
    return annotation in (dspy.History, dspy.ToolCalls, list[dspy.Tool])


def _answer_parts(answer: Answer, request: Request) -> list[Any]:
    if isinstance(answer, str):
        return [TextPart(answer)]
    if "tool_calls" in answer and request.tools:
        return [
            ToolCallPart(f"call_{i}", c["name"], dict(c.get("args", {})))
            for i, c in enumerate(answer["tool_calls"])
        ] or [TextPart("")]
    return [TextPart(format_outputs(dict(answer)))]


def format_outputs(outputs: dict[str, Any]) -> str:
    """Write output fields the way the active adapter expects them."""
    if not isinstance(dspy.settings.adapter, dspy.JSONAdapter):  # None means ChatAdapter
        sections = [f"[[ ## {k} ## ]]\n{_chat_value(v)}" for k, v in outputs.items()]
        return "\n\n".join([*sections, "[[ ## completed ## ]]"])
    return json.dumps(outputs)


def _chat_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _count(text: str) -> int:
    """A deterministic stand-in for a tokenizer: whitespace-separated words."""
    return len(text.split())
