"""Model backends: one factory from a model id to a ``dspy.LM``."""

from freyr_dspy.backends._embedded import (
    EMBEDDED_MODELS,
    GGUF_PREFIX,
    EmbeddedModel,
    PackagedFile,
    PartPackages,
    is_installed,
    is_ready,
    model_cache_dir,
    model_path,
    register_embedded_model,
    shared_engine,
    use_model_cache,
)
from freyr_dspy.backends._factory import EXAMPLE_IDS, make_lm
from freyr_dspy.backends._llamacpp import DEFAULT_PREFIX_CACHE_BYTES, LlamaCppEngine
from freyr_dspy.backends._parts import Part, PartSet

__all__ = [
    "DEFAULT_PREFIX_CACHE_BYTES",
    "EMBEDDED_MODELS",
    "EXAMPLE_IDS",
    "GGUF_PREFIX",
    "EmbeddedModel",
    "LlamaCppEngine",
    "PackagedFile",
    "Part",
    "PartPackages",
    "PartSet",
    "is_installed",
    "is_ready",
    "make_lm",
    "model_cache_dir",
    "model_path",
    "register_embedded_model",
    "shared_engine",
    "use_model_cache",
]
