"""Compiling a program against a benchmark or a user's examples.

The compile study (what ``freyr compile`` and ``freyr_dspy.compile`` run): ``fit_program``
with ``CompileSettings`` returns a ``CompileOutcome``. Inside: ``rows`` (the training rows and
each candidate scored on them as the artifact it ships), ``proposals`` (what each stage tries,
chosen from the baseline's failures), ``margins`` (margins fitted to the logged checks),
``pools`` (contrastive demo pools with ``false`` verdicts), ``guard`` (folds, the nested choice
and the checks before anything ships), ``trials`` (the Optuna study as the ledger), ``study``
(the stages and successive halving) and ``outcome`` (the report and the row records).

Fitting one configuration (``freyr compile --no-search``): ``compiler`` (split, score,
optimize, score again), ``optimizers`` (one runner per DSPy optimizer), ``gold`` (demos
replayed from the gold calls), ``metrics`` (a benchmark's score as DSPy metrics), ``gepa``
(GEPA's predictor selector), ``job`` (compile into an artifact) and ``dataset_demos`` (what a
compile on a user's examples keeps in its demos).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from freyr_dspy.compiling._candidates import Candidate, PoolSpec, switch_names
    from freyr_dspy.compiling._compiler import load_trainset, reattach_models
    from freyr_dspy.compiling._fit import fit_program
    from freyr_dspy.compiling._gold import GoldContext, register_gold_answer
    from freyr_dspy.compiling._guard import Tally, sign_test
    from freyr_dspy.compiling._job import (
        CompiledArtifact,
        CompileJob,
        compile_artifact,
        compile_job,
        regression_warning,
    )
    from freyr_dspy.compiling._metrics import BenchmarkMetric
    from freyr_dspy.compiling._optimizers import OPTIMIZER_NAMES, OptimizerConfig, optimize
    from freyr_dspy.compiling._outcome import CompileOutcome
    from freyr_dspy.compiling._settings import DEFAULT_MINUTES, CompileSettings
    from freyr_dspy.compiling._study import Progress, ProgressEvent

__all__ = [
    "DEFAULT_MINUTES",
    "OPTIMIZER_NAMES",
    "BenchmarkMetric",
    "Candidate",
    "CompileJob",
    "CompileOutcome",
    "CompileSettings",
    "CompiledArtifact",
    "GoldContext",
    "OptimizerConfig",
    "PoolSpec",
    "Progress",
    "ProgressEvent",
    "Tally",
    "compile_artifact",
    "compile_job",
    "fit_program",
    "load_trainset",
    "optimize",
    "reattach_models",
    "register_gold_answer",
    "regression_warning",
    "sign_test",
    "switch_names",
]

# NOTE: loaded on first use: the compile stack pulls in DSPy's optimizers, which ``freyr run``
# and ``freyr serve`` never need.
_HOMES = {
    "switch_names": "_candidates",
    "load_trainset": "_compiler",
    "reattach_models": "_compiler",
    "GoldContext": "_gold",
    "register_gold_answer": "_gold",
    "CompileJob": "_job",
    "CompiledArtifact": "_job",
    "compile_artifact": "_job",
    "compile_job": "_job",
    "regression_warning": "_job",
    "BenchmarkMetric": "_metrics",
    "OPTIMIZER_NAMES": "_optimizers",
    "OptimizerConfig": "_optimizers",
    "optimize": "_optimizers",
    "Candidate": "_candidates",
    "PoolSpec": "_candidates",
    "fit_program": "_fit",
    "Tally": "_guard",
    "sign_test": "_guard",
    "CompileOutcome": "_outcome",
    "CompileSettings": "_settings",
    "DEFAULT_MINUTES": "_settings",
    "Progress": "_study",
    "ProgressEvent": "_study",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"freyr_dspy.compiling.{home}"), name)
