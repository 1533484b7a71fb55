"""``make_lm``: the one factory from a model id + sampling settings to a ``dspy.LM``.

Model ids are DSPy/litellm strings used verbatim (``ollama_chat/qwen2.5:7b``,
``openai/gpt-4o-mini``, ``hosted_vllm/x`` with ``api_base``), plus ``embedded/...`` (in-process
llama.cpp) and ``fake/...`` (the strict test doubles of ``freyr_dspy.testing``).
"""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.backends._embedded import EMBEDDED_MODELS, GGUF_PREFIX, shared_engine
from freyr_dspy.errors import UnknownModelError
from freyr_dspy.schemas import Sampling

__all__ = ["EXAMPLE_IDS", "OLLAMA_NUM_CTX", "make_lm"]

#: Remote calls go through litellm: it sends ``max_tokens`` (llama.cpp servers ignore
#: ``max_completion_tokens``) and reaches Ollama's ``/api/chat`` with ``num_ctx``.
REMOTE_ENGINE = "litellm"
OLLAMA_DEFAULT_BASE = "http://localhost:11434"
OLLAMA_NUM_CTX = 8192

EXAMPLE_IDS = (
    "gguf:/path/to/model.gguf (any local GGUF, in-process)",
    "ollama_chat/qwen2.5:7b",
    "openai/gpt-4o-mini",
    "hosted_vllm/<name> (with api_base=http://127.0.0.1:8000/v1)",
    "fake/<name> (test doubles from freyr_dspy.testing)",
)


def make_lm(
    model_id: str,
    sampling: Sampling | None = None,
    *,
    api_base: str | None = None,
    cache: bool = False,
) -> dspy.LM:
    """Build the LM for one role.

    Args:
        model_id: ``embedded/<name>``, ``gguf:<path>``, ``fake/<name>`` or any DSPy/litellm
            model string.
        sampling: temperature, top_p, top_k (where the backend has it), max_tokens, seed.
        api_base: server URL for OpenAI-compatible servers or Ollama.
        cache: use DSPy's response cache; off by default because cached calls report no
            tokens and take no time, which would falsify measurements.

    Raises:
        UnknownModelError: for an id no backend understands, with a "did you mean".
    """
    kwargs: dict[str, Any] = (sampling or Sampling()).as_kwargs()
    provider = model_id.split("/", 1)[0] if "/" in model_id else ""
    if model_id.startswith(GGUF_PREFIX) or provider == "embedded":
        if provider == "embedded" and model_id not in EMBEDDED_MODELS:
            raise UnknownModelError(model_id, EMBEDDED_MODELS)
        kwargs.setdefault("max_tokens", 512)
        return dspy.LM(model_id, engine=shared_engine(model_id), cache=cache, **kwargs)
    if provider == "fake":
        from freyr_dspy.testing import make_fake_lm

        return make_fake_lm(model_id, cache=cache, **kwargs)
    if provider not in _remote_providers():
        raise UnknownModelError(
            model_id,
            [*EMBEDDED_MODELS, *_with_provider(model_id), *(f"{p}/" for p in _remote_providers())],
            hint="Use embedded/<name>, gguf:<path>, fake/<name> or a litellm id such as "
            "ollama_chat/<tag>.",
        )
    return _remote_lm(model_id, provider, kwargs, api_base, cache)


def _remote_lm(
    model_id: str, provider: str, kwargs: dict[str, Any], api_base: str | None, cache: bool
) -> dspy.LM:
    kwargs.pop("top_k", None) if provider not in {"ollama", "ollama_chat"} else None
    if provider in {"ollama", "ollama_chat"}:
        api_base = api_base or OLLAMA_DEFAULT_BASE
        kwargs.setdefault("num_ctx", OLLAMA_NUM_CTX)
    if api_base:
        kwargs["api_base"] = api_base
        if provider in {"openai", "hosted_vllm"}:
            kwargs.setdefault("api_key", "none")  # local servers take any key
    return dspy.LM(model_id, engine=REMOTE_ENGINE, cache=cache, num_retries=1, **kwargs)


def _with_provider(model_id: str) -> list[str]:
    """Suggest ``provider/model`` for a bare name litellm knows (``gpt-4o``: ``openai/gpt-4o``)."""
    import litellm

    provider = (litellm.model_cost.get(model_id) or {}).get("litellm_provider")
    return [f"{provider}/{model_id}"] if isinstance(provider, str) else []


def _remote_providers() -> set[str]:
    import litellm

    return {str(getattr(p, "value", p)) for p in litellm.provider_list}
