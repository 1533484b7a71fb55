"""DSPy's JSON and chat adapters, with the system message built once per signature.

DSPy rebuilds the system message (field descriptions, structure, instructions) on every call,
building pydantic type adapters for each field: about 2 ms per call, the largest part of a
FREYR step's overhead with an instant model. The message depends only on the signature and
the adapter's settings, so it is memoised per signature class (weakly: optimizers create
many short-lived signatures). Everything else - demos, inputs, parsing - is DSPy's own.
"""

from __future__ import annotations

import weakref
from typing import Any

import dspy

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


class FreyrJSONAdapter(_MemoisedSystemMessage, dspy.JSONAdapter):
    """``dspy.JSONAdapter`` with a memoised system message."""


class FreyrChatAdapter(_MemoisedSystemMessage, dspy.ChatAdapter):
    """``dspy.ChatAdapter`` with a memoised system message."""


def make_adapter(name: str) -> dspy.Adapter:
    """Return the adapter called ``json`` or ``chat`` (anything else means ``json``)."""
    return FreyrChatAdapter() if name == "chat" else FreyrJSONAdapter()
