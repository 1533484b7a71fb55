"""Will a request fit the model's context? A rough estimate, checked before the program runs.

The estimate counts the characters the roles may be shown - every message's text and the
JSON of the tool definitions - at ``CHARS_PER_TOKEN`` characters a token (BPE tokenizers
average about four on English and JSON), and adds ``PROGRAM_TOKENS`` for the program's own
prompt: instructions, compiled demos and the reply. A request over the smallest context of the
program's models is refused with ``context_length_exceeded``; nothing is truncated. The
estimate errs high for tools (a role sees one tool's spec, or one line per tool), so a
request refused here would have been close to the limit anyway; one that passes and still
overflows fails in the model, and is refused with the same code.
"""

from __future__ import annotations

import json
import math
from typing import Any

from freyr_dspy.backends import EMBEDDED_MODELS, GGUF_PREFIX, MAX_N_CTX, OLLAMA_NUM_CTX
from freyr_dspy.program import FreyrProgram
from freyr_dspy.serve._conversation import Turn
from freyr_dspy.serve._errors import context_exceeded

__all__ = ["check_fits", "context_window", "model_context"]

CHARS_PER_TOKEN = 4
#: Room kept for the program's own prompt (instructions, demos) and the reply.
PROGRAM_TOKENS = 1024


def estimate_tokens(turn: Turn, tools: list[Any] | None) -> int:
    """Roughly how many tokens of the request the roles may be shown."""
    characters = turn.text_size + (len(json.dumps(tools)) if tools else 0)
    return math.ceil(characters / CHARS_PER_TOKEN)


def check_fits(turn: Turn, tools: list[Any] | None, window: int | None) -> None:
    """Refuse a request that cannot fit ``window`` tokens (None: the window is unknown).

    Raises:
        ApiError: 400 ``context_length_exceeded``.
    """
    if window is None:
        return
    estimated = estimate_tokens(turn, tools) + PROGRAM_TOKENS
    if estimated > window:
        raise context_exceeded(estimated, window)


def context_window(program: FreyrProgram) -> int | None:
    """The smallest context of the program's models (None when none is known)."""
    windows = [model_context(spec.model) for spec in program.assignment.values()]
    known = [w for w in windows if w is not None]
    return min(known) if known else None


def model_context(model_id: str) -> int | None:
    """The context of one model id, from the embedded catalog, the backend or litellm."""
    if model_id in EMBEDDED_MODELS:
        return EMBEDDED_MODELS[model_id].n_ctx
    if model_id.startswith(GGUF_PREFIX):
        return MAX_N_CTX  # the engine loads at most this much (less if the file was trained so)
    provider = model_id.split("/", 1)[0]
    if provider in ("ollama", "ollama_chat"):
        return OLLAMA_NUM_CTX  # make_lm asks Ollama for this window
    if provider == "fake":
        return None
    return _litellm_context(model_id)


def _litellm_context(model_id: str) -> int | None:
    import litellm

    try:
        value = litellm.get_model_info(model_id).get("max_input_tokens")
    except Exception:  # litellm raises its own errors for models it has no entry for
        return None
    return int(value) if value else None
