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
    runs_in_process,
    shared_engine,
    use_model_cache,
)
from freyr_dspy.backends._factory import EXAMPLE_IDS, OLLAMA_NUM_CTX, make_lm
from freyr_dspy.backends._llamacpp import DEFAULT_PREFIX_CACHE_BYTES, MAX_N_CTX, LlamaCppEngine
from freyr_dspy.backends._llamacpp_grammar import schema_grammar
from freyr_dspy.backends._parts import Part, PartSet
from freyr_dspy.backends._replay import ReplayMemo, engines_of, replaying

__all__ = [
    "DEFAULT_PREFIX_CACHE_BYTES",
    "EMBEDDED_MODELS",
    "EXAMPLE_IDS",
    "GGUF_PREFIX",
    "MAX_N_CTX",
    "OLLAMA_NUM_CTX",
    "EmbeddedModel",
    "LlamaCppEngine",
    "PackagedFile",
    "Part",
    "PartPackages",
    "PartSet",
    "ReplayMemo",
    "engines_of",
    "is_installed",
    "is_ready",
    "make_lm",
    "model_cache_dir",
    "model_path",
    "register_embedded_model",
    "replaying",
    "runs_in_process",
    "schema_grammar",
    "shared_engine",
    "use_model_cache",
]
