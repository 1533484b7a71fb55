"""A stand-in for ``llama_cpp.Llama`` behind a real ``LlamaCppEngine``: no model loaded."""

from __future__ import annotations

from typing import Any

from freyr_dspy.backends import LlamaCppEngine


class StubLlama:
    """Stands in for ``llama_cpp.Llama``: records the kwargs, returns a canned completion."""

    prompt_evaluated = 0  # as counted by the engine's Llama subclass

    def __init__(self, message: dict[str, Any], finish_reason: str = "stop") -> None:
        self.message = message
        self.finish_reason = finish_reason
        self.requests: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(kwargs)
        self.prompt_evaluated += 23  # of the 123 prompt tokens below: 100 came from the cache
        return {
            "id": "chatcmpl-1",
            "choices": [{"message": self.message, "finish_reason": self.finish_reason}],
            "usage": {"prompt_tokens": 123, "completion_tokens": 7, "total_tokens": 130},
        }


def stub_engine(message: dict[str, Any], finish_reason: str = "stop") -> tuple[Any, StubLlama]:
    engine = LlamaCppEngine("/nonexistent.gguf", seed=11)
    stub = StubLlama(message, finish_reason)
    engine._llama = stub
    return engine, stub
