"""Model backends: one factory from a model id to a ``dspy.LM``."""

from freyr_dspy.backends.embedded import EMBEDDED_MODELS, EmbeddedModel, is_installed, model_path
from freyr_dspy.backends.factory import EXAMPLE_IDS, make_lm
from freyr_dspy.backends.llamacpp import LlamaCppEngine

__all__ = [
    "EMBEDDED_MODELS",
    "EXAMPLE_IDS",
    "EmbeddedModel",
    "LlamaCppEngine",
    "is_installed",
    "make_lm",
    "model_path",
]
