"""A stand-in for ``llama_cpp.Llama`` behind a real ``LlamaCppEngine``: no model loaded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from freyr_dspy.backends import LlamaCppEngine


class StubLlama:
    """Stands in for ``llama_cpp.Llama``: records the kwargs, returns a canned completion."""

    prompt_evaluated = 0  # as counted by the engine's Llama subclass
    last_prompt_tokens = last_generated = 0  # the last generation's, as the subclass counts

    def __init__(self, message: dict[str, Any], finish_reason: str = "stop") -> None:
        self.message = message
        self.finish_reason = finish_reason
        self.requests: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> Any:
        self.requests.append(kwargs)
        self.prompt_evaluated += 23  # of the 123 prompt tokens below: 100 came from the cache
        if kwargs.get("stream"):
            return self._chunks()
        return {
            "id": "chatcmpl-1",
            "choices": [{"message": self.message, "finish_reason": self.finish_reason}],
            "usage": {"prompt_tokens": 123, "completion_tokens": 7, "total_tokens": 130},
        }

    def _chunks(self) -> Iterator[dict[str, Any]]:
        """The content in chunks of three characters, as a streamed completion yields it."""
        self.last_prompt_tokens, self.last_generated = 123, 7
        content = self.message.get("content") or ""
        yield {"id": "chatcmpl-1", "choices": [{"delta": {"role": "assistant"}}]}
        for start in range(0, len(content), 3):
            delta = {"content": content[start : start + 3]}
            yield {"id": "chatcmpl-1", "choices": [{"delta": delta, "finish_reason": None}]}
        yield {"id": "chatcmpl-1", "choices": [{"delta": {}, "finish_reason": self.finish_reason}]}


def stub_engine(message: dict[str, Any], finish_reason: str = "stop") -> tuple[Any, StubLlama]:
    engine = LlamaCppEngine("/nonexistent.gguf", seed=11)
    stub = StubLlama(message, finish_reason)
    engine._llama = stub
    return engine, stub
