"""A llama.cpp chat completion generated as a stream, its text fed to a listener as it comes.

``create_chat_completion(stream=True)`` yields OpenAI-shaped chunks, a token's text at a time,
and reports no usage; the engine's ``Llama`` subclass counts the prompt and generated tokens
of its last generation instead. The chunks are put back together into the dict the
non-streamed call returns, so the engine converts either the same way.
"""

from __future__ import annotations

from typing import Any

from freyr_dspy.text_stream import TextListener

__all__ = ["streamed_chat_completion"]


def streamed_chat_completion(
    llama: Any, messages: list[dict[str, Any]], kwargs: dict[str, Any], listener: TextListener
) -> dict[str, Any]:
    """Run one chat completion as a stream, feeding ``listener``; return the whole completion.

    Args:
        llama: the engine's ``Llama`` (it counts ``last_prompt_tokens``/``last_generated``).
        messages: the OpenAI-style messages.
        kwargs: ``create_chat_completion``'s other arguments (no tools: a tool choice is
            parsed from the whole answer, never streamed).
        listener: called with each new piece of the answer's text.
    """
    pieces: list[str] = []
    finish_reason = "stop"
    completion_id = None
    for chunk in llama.create_chat_completion(messages=messages, stream=True, **kwargs):
        completion_id = completion_id or chunk.get("id")
        choice = chunk["choices"][0]
        text = choice.get("delta", {}).get("content")
        if text:
            pieces.append(text)
            listener(text)
        finish_reason = choice.get("finish_reason") or finish_reason
    prompt, generated = int(llama.last_prompt_tokens), int(llama.last_generated)
    return {
        "id": completion_id,
        "choices": [
            {
                "message": {"role": "assistant", "content": "".join(pieces)},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": generated,
            "total_tokens": prompt + generated,
        },
    }
