"""What a compile and a model-assignment search share: where a study lives, and its cache.

``storage_url``/``open_storage`` turn a file, ``sqlite:///`` or RDB URL into an Optuna storage
(``fail_dead_local_trials`` frees the trials a killed process left running), and
``EvaluationCache`` keeps each scored row in a file, so an interrupted study resumes paying
only for what it had not scored yet. ``freyr_dspy.compiling`` (the compile study) and
``freyr_dspy.search`` (the model-assignment search) both run on these.
"""

from freyr_dspy.studies._cache import EvaluationCache
from freyr_dspy.studies._storage import (
    fail_dead_local_trials,
    open_storage,
    redact,
    storage_url,
    worker_id,
)

__all__ = [
    "EvaluationCache",
    "fail_dead_local_trials",
    "open_storage",
    "redact",
    "storage_url",
    "worker_id",
]
