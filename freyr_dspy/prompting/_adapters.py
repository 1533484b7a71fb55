"""The adapters that turn a role's signature into a prompt: lean (default), JSON and chat.

``lean`` (``LeanAdapter``) is DSPy's JSON adapter with a compact prompt, static inputs first.
DSPy's own adapters spend most of a small role's prompt on prose about the prompt: every input
field described, an input and output template, the instructions wrapped in a sentence, and a
closing "Respond with a JSON object in the following order of fields ..." line. For FREYR's
intent role that is ~300 of ~470 tokens, paid on every call. The lean prompt is:

    system:  the instructions, then one line per output field: "key" (type): description
    user:    <tools>...</tools> <state>...</state> ... <message>...</message>
             (an input holding only its placeholder, such as no conversation yet, is left
             out: ``freyr_dspy.prompting._placeholders``)
    answer:  a JSON object (a grammar enforces it on llama.cpp; the tolerant parsers stay)

Inputs are written static-first: the tool catalog or spec, then the state, then the rest in
the signature's order. A prefix cache (llama.cpp's, or a provider's) then reuses the longest
possible prefix between requests to the same toolbox, and the request itself sits right
before the answer. Demos a pool chose for the request (``RequestDemos``) differ from one
request to the next, so they would end that shared prefix before the catalog; when they leave
the static inputs out (as compiled pools do), those inputs close the system message instead,
before the demos:

    system:  the instructions, the answer's keys, then <tools>...</tools> <state>...</state>
    demos:   user <message>...</message> / assistant {...}, nearest last
    user:    <conversation>... <message>...</message>

so every request to a toolbox still reuses its catalog, and only its demos and its own words
are new. Signatures are not changed, so compiled instructions and demos run under
any adapter.

All three honour a role's per-call output contract (``freyr_dspy.prompting._contracts``): the JSON
adapters send it as the ``response_format`` of a backend that enforces JSON schemas, leaving
the prompt as it is; otherwise (and always with the chat adapter) the schema is written into
the prompt, and the roles' tolerant parsers stay the safety net.

DSPy rebuilds the system message (field descriptions, structure, instructions) on every call,
building pydantic type adapters for each field: about 2 ms per call, the largest part of a
FREYR step's overhead with an instant model. The message depends only on the signature and
the adapter's settings, so it is memoised per signature class (weakly: optimizers create
many short-lived signatures). Everything else - demos, inputs, parsing - is DSPy's own, except
that any failure to parse a model's output is reported as ``AdapterParseError``, the one
failure the roles handle (by reading the raw text themselves).
"""

from __future__ import annotations

import json
import weakref
from typing import Any

import dspy
import json_repair
from dspy.adapters.types.tool import ToolCalls
from dspy.adapters.utils import format_field_value, get_annotation_name, serialize_for_json
from dspy.utils.exceptions import AdapterParseError
from pydantic.fields import FieldInfo

from freyr_dspy.errors import one_line
from freyr_dspy.prompting._contracts import (
    contract_of,
    enforces_schema,
    json_text_fields,
    response_format,
    stated,
)
from freyr_dspy.prompting._demo_pool import RequestDemos
from freyr_dspy.prompting._placeholders import says_nothing

__all__ = ["FreyrChatAdapter", "FreyrJSONAdapter", "LeanAdapter", "input_order", "make_adapter"]

_SYSTEM_MESSAGES: weakref.WeakKeyDictionary[type, dict[tuple[Any, ...], str]] = (
    weakref.WeakKeyDictionary()
)


class _MemoisedSystemMessage:
    """Mixin: cache ``format_system_message`` per (signature, adapter class, native calling).

    NOTE: a plain mixin, not a ``dspy.Adapter`` subclass: DSPy wraps the methods of every
    Adapter subclass, which would put the base class's abstract ``parse`` first in the MRO.
    """

    use_native_function_calling: bool

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        """Return DSPy's system message for ``signature``, computed once."""
        per_signature = _SYSTEM_MESSAGES.setdefault(signature, {})
        key = (type(self), self.use_native_function_calling)
        if key not in per_signature:
            per_signature[key] = super().format_system_message(signature)  # type: ignore[misc]
        return per_signature[key]


#: What DSPy's parsing raises on malformed output besides ``AdapterParseError`` (see below).
_PARSE_ERRORS = (ValueError, TypeError, SyntaxError, RecursionError, MemoryError)


class _ParseErrorsAsAdapterErrors:
    """Mixin: whatever a model wrote, ``parse`` fails only with ``AdapterParseError``.

    NOTE: DSPy's parsers let other errors escape on malformed output: ``json_repair`` raises
    ``ValueError`` ("Input nesting exceeds the supported parser recursion depth.") or
    ``RecursionError`` on a few hundred nested brackets, before DSPy's own error handling;
    its ``ast.literal_eval`` fallback raises ``MemoryError`` (Python's parser stack) on a
    field of a few thousand ``-`` signs.
    """

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        """Parse like DSPy; report any failure on this completion as ``AdapterParseError``.

        A text field held to a non-string schema (``json_text_fields``) is its value's JSON,
        where DSPy would write Python's ``repr`` of it.

        Raises:
            AdapterParseError: when the completion cannot be parsed into the output fields.
        """
        try:
            parsed: dict[str, Any] = super().parse(signature, completion)  # type: ignore[misc]
        except _PARSE_ERRORS as exc:
            raise AdapterParseError(
                adapter_name=type(self).__name__,
                signature=signature,
                lm_response=completion,
                message=one_line(exc, limit=None, typed=True),
            ) from exc
        if fields := json_text_fields(signature):
            parsed.update(_json_texts(fields, completion))
        return parsed


def _json_texts(fields: list[str], completion: str) -> dict[str, str]:
    """The JSON text of each of ``fields`` whose value in the answer is not a string."""
    answer = json_repair.loads(completion)
    if not isinstance(answer, dict):
        return {}
    return {
        name: json.dumps(answer[name], ensure_ascii=False)
        for name in fields
        if name in answer and not isinstance(answer[name], str)
    }


class _HonouredContract:
    """Mixin: send a contracted signature's schema to the backend, or state it in the prompt.

    ``response_format`` is sent only by the JSON adapter, to a backend that enforces it
    (``enforces_schema``); the signature is then formatted as declared, so the prompt (and a
    prefix cache) is unchanged. Otherwise the schema goes into the prompt (``stated``).
    """

    def __call__(
        self,
        lm: dspy.BaseLM,
        lm_kwargs: dict[str, Any],
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """Apply the contract, then run DSPy's adapter."""
        signature, lm_kwargs = self._apply_contract(lm, lm_kwargs, signature)
        return super().__call__(lm, lm_kwargs, signature, demos, inputs)  # type: ignore[misc,no-any-return]

    async def acall(
        self,
        lm: dspy.BaseLM,
        lm_kwargs: dict[str, Any],
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """Apply the contract, then run DSPy's adapter (async)."""
        signature, lm_kwargs = self._apply_contract(lm, lm_kwargs, signature)
        return await super().acall(lm, lm_kwargs, signature, demos, inputs)  # type: ignore[misc,no-any-return]

    def format_for(
        self,
        lm: dspy.BaseLM,
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The messages one call to ``lm`` sends (the contract applied), without calling it."""
        signature, _ = self._apply_contract(lm, {}, signature)
        return self.format(signature, demos, inputs)  # type: ignore[attr-defined,no-any-return]

    def _apply_contract(
        self, lm: dspy.BaseLM, lm_kwargs: dict[str, Any], signature: type[dspy.Signature]
    ) -> tuple[type[dspy.Signature], dict[str, Any]]:
        if not contract_of(signature):
            return signature, lm_kwargs
        if isinstance(self, dspy.JSONAdapter) and enforces_schema(lm):
            return signature, {**lm_kwargs, "response_format": response_format(signature)}
        return stated(signature), lm_kwargs


class FreyrJSONAdapter(
    _HonouredContract, _ParseErrorsAsAdapterErrors, _MemoisedSystemMessage, dspy.JSONAdapter
):
    """``dspy.JSONAdapter`` with contracts, a memoised system message, contained parse errors."""

    def _prepare_response_format(
        self, lm: dspy.BaseLM, lm_kwargs: dict[str, Any], signature: type[dspy.Signature]
    ) -> None:
        # NOTE: DSPy's own choice would replace the format a contract has just set.
        if "response_format" in lm_kwargs and contract_of(signature):
            return
        super()._prepare_response_format(lm, lm_kwargs, signature)


class FreyrChatAdapter(
    _HonouredContract, _ParseErrorsAsAdapterErrors, _MemoisedSystemMessage, dspy.ChatAdapter
):
    """``dspy.ChatAdapter`` with contracts, a memoised system message, contained parse errors."""

    def _make_json_adapter_fallback(self) -> dspy.JSONAdapter:
        # NOTE: overrides DSPy 3.4's hook so the retry after a chat-format parse failure also
        # contains its parse errors (DSPy's fallback is a plain JSONAdapter).
        return FreyrJSONAdapter(
            use_native_function_calling=self.use_native_function_calling,
            parallel_tool_calls=self.parallel_tool_calls,
        )


#: Inputs that are the same for every request to one toolbox (catalogs and specs), then the
#: state (the same across the requests of a session); everything else follows in its order.
STATIC_INPUTS = ("tools", "tool", "libraries", "catalog", "candidates", "state")


def input_order(signature: type[dspy.Signature]) -> list[str]:
    """The signature's input names, static ones first (see ``STATIC_INPUTS``)."""
    names = list(signature.input_fields)
    static = [n for n in STATIC_INPUTS if n in names]
    return static + [n for n in names if n not in static]


def output_line(name: str, field: FieldInfo) -> str:
    """One output field for the system message: ``"name" (type): description. Constraints``."""
    # NOTE: DSPy fields keep desc and constraints in a dict (pydantic also allows a callable).
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    desc = str(extra.get("desc", "")).strip()
    line = f'"{name}" ({get_annotation_name(field.annotation)})'
    if desc and desc != f"${{{name}}}":  # DSPy's placeholder for an undescribed field
        line += f": {desc}"
    if extra.get("constraints"):
        line += f". Constraints: {extra['constraints']}"
    return line


class LeanAdapter(FreyrJSONAdapter):
    """JSON in, JSON out, with ~60 % fewer fixed tokens than DSPy's JSON adapter."""

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        """The instructions and the answer's JSON keys; nothing about the inputs' layout."""
        outputs = [
            output_line(name, field)
            for name, field in signature.output_fields.items()
            if field.annotation is not ToolCalls  # native calls go through the tools API
        ]
        answer = "Answer with one JSON object with these keys, in order:\n" + "\n".join(outputs)
        return f"{signature.instructions.strip()}\n\n{answer}"

    def format(
        self,
        signature: type[dspy.Signature],
        demos: list[dict[str, Any]],
        inputs: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """DSPy's layout, or with a request's own demos the static inputs in the system message.

        See the module docstring: only demos chosen for this request (``RequestDemos``) that
        leave every static input out move them; fixed demos keep DSPy's layout.
        """
        static = [
            name
            for name in input_order(signature)
            if name in STATIC_INPUTS and name in inputs and not says_nothing(name, inputs[name])
        ]
        moved = isinstance(demos, RequestDemos) and demos and static
        if not moved or any(name in demo for demo in demos for name in static):
            return super().format(signature, demos, inputs)  # type: ignore[no-any-return]
        rest = {name: value for name, value in inputs.items() if name not in static}
        messages: list[dict[str, Any]] = super().format(signature, demos, rest)
        shown = self.format_user_message_content(signature, {n: inputs[n] for n in static})
        messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{shown}"}
        return messages

    def format_user_message_content(
        self,
        signature: type[dspy.Signature],
        inputs: dict[str, Any],
        prefix: str = "",
        suffix: str = "",
        main_request: bool = False,
    ) -> str:
        """Each input as ``<name>value</name>``, static inputs first; empty ones left out."""
        sections = [prefix]
        for name in input_order(signature):
            if name in inputs and not says_nothing(name, inputs[name]):
                value = format_field_value(signature.input_fields[name], inputs[name])
                sections.append(f"<{name}>\n{value}\n</{name}>")
        sections.append(suffix)
        return "\n".join(s for s in sections if s).strip()

    def format_assistant_message_content(
        self,
        signature: type[dspy.Signature],
        outputs: dict[str, Any],
        missing_field_message: str | None = None,
    ) -> str:
        """A demo's answer: the JSON object the model should write."""
        answer = {
            name: serialize_for_json(outputs.get(name, missing_field_message))
            for name in signature.output_fields
        }
        return json.dumps(answer, ensure_ascii=False)


def make_adapter(name: str) -> dspy.Adapter:
    """Return the adapter called ``lean``, ``json`` or ``chat`` (anything else means ``lean``)."""
    if name == "chat":
        return FreyrChatAdapter()
    return FreyrJSONAdapter() if name == "json" else LeanAdapter()
