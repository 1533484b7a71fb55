"""DSPy's JSON and chat adapters, with the system message built once per signature.

DSPy rebuilds the system message (field descriptions, structure, instructions) on every call,
building pydantic type adapters for each field: about 2 ms per call, the largest part of a
FREYR step's overhead with an instant model. The message depends only on the signature and
the adapter's settings, so it is memoised per signature class (weakly: optimizers create
many short-lived signatures). Everything else - demos, inputs, parsing - is DSPy's own, except
that any failure to parse a model's output is reported as ``AdapterParseError``, the one
failure the roles handle (by reading the raw text themselves).
"""

from __future__ import annotations

import weakref
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError

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
                message=f"{type(exc).__name__}: {exc}",
            ) from exc
        return parsed


class FreyrJSONAdapter(_ParseErrorsAsAdapterErrors, _MemoisedSystemMessage, dspy.JSONAdapter):
    """``dspy.JSONAdapter`` with a memoised system message and contained parse errors."""


class FreyrChatAdapter(_ParseErrorsAsAdapterErrors, _MemoisedSystemMessage, dspy.ChatAdapter):
    """``dspy.ChatAdapter`` with a memoised system message and contained parse errors."""

    def _make_json_adapter_fallback(self) -> dspy.JSONAdapter:
        # NOTE: overrides DSPy 3.4's hook so the retry after a chat-format parse failure also
        # contains its parse errors (DSPy's fallback is a plain JSONAdapter).
        return FreyrJSONAdapter(
            use_native_function_calling=self.use_native_function_calling,
            parallel_tool_calls=self.parallel_tool_calls,
        )


def make_adapter(name: str) -> dspy.Adapter:
    """Return the adapter called ``json`` or ``chat`` (anything else means ``json``)."""
    return FreyrChatAdapter() if name == "chat" else FreyrJSONAdapter()
