"""``compile_program``: split the trainset, score, optimize, re-apply the models, score again.

The trainset is the benchmark's own ``train_episodes`` (the project's ``trainsets/``), never
its test inputs. A seeded split keeps a dev part aside; the dev score before and after
compiling is what ``freyr compile`` reports and what artifacts record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dspy
from pydantic import BaseModel

from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions, step_example
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.compiling._optimizers import OptimizerConfig, optimize
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation import EvalSummary, Progress, score_program
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import Settings
from freyr_dspy.tools import toolbox_fingerprint

__all__ = [
    "CompileReport",
    "compile_program",
    "dev_episodes",
    "load_trainset",
    "reattach_models",
    "split_trainset",
    "trainset_sha256",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompileReport:
    """What ``compile_program`` produced: the program and the evidence for it.

    ``before`` and ``after`` are the dev scores of the uncompiled and the compiled program
    (``before`` is None when it was not measured).
    """

    program: FreyrProgram
    config: OptimizerConfig
    before: EvalSummary | None
    after: EvalSummary
    n_train: int
    n_dev: int
    trainset_sha256: str
    seconds: float


def load_trainset(
    benchmark: Benchmark, settings: Settings, options: EvalOptions
) -> list[dspy.Example]:
    """Read the benchmark's training episodes as examples (one per step).

    A first step without ``start_state`` starts from the domain's initial state (stateless
    domains such as NLT's have nothing else), so it stands alone like any other.

    Raises:
        ConfigError: when a later step has no ``start_state`` of its own.
    """
    examples = []
    for episode in benchmark.train_episodes(settings.trainsets_dir, options):
        for index, step in enumerate(episode.steps):
            if index > 0 and step.start_state is None:
                raise ConfigError(
                    f"training step {step.id!r} of {benchmark.name} has no "
                    "start_state; training steps must be standalone"
                )
            examples.append(step_example(step))
    return examples


def split_trainset(
    examples: Sequence[dspy.Example], *, dev_fraction: float = 0.3, seed: int = 0
) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """Shuffle with ``seed`` and cut off a dev part (at least one example each side).

    Raises:
        ConfigError: with fewer than two examples.
    """
    if len(examples) < 2:
        raise ConfigError(f"need at least 2 training examples to split, got {len(examples)}")
    shuffled = list(examples)
    random.Random(seed).shuffle(shuffled)
    n_dev = min(max(1, round(len(shuffled) * dev_fraction)), len(shuffled) - 1)
    return shuffled[n_dev:], shuffled[:n_dev]


def trainset_sha256(examples: Sequence[dspy.Example]) -> str:
    """Hash the examples' inputs and gold (order-sensitive) so artifacts name their data."""
    rows = [
        {
            "message": ex.message,
            "conversation": ex.conversation,
            "state": _jsonable(ex.state),
            "expected": _jsonable(ex.step.expected),
            "id": ex.step.id,
            # only where a row offers its own tools, so older trainsets keep their hash
            **(
                {"tools": toolbox_fingerprint(ex.step.toolbox)}
                if ex.step.toolbox is not None
                else {}
            ),
        }
        for ex in examples
    ]
    text = json.dumps(rows, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dev_episodes(devset: Sequence[dspy.Example]) -> list[Episode]:
    """Turn dev examples into one-step episodes, the form every evaluation runs.

    Each example's gold ``step`` carries its own ``start_state`` (see ``load_trainset``), so
    it stands alone like the examples the optimizers see.
    """
    return [Episode(id=ex.step.id, case="dev", steps=(ex.step,)) for ex in devset]


def compile_program(
    program: FreyrProgram,
    benchmark: Benchmark,
    optimizer: OptimizerConfig,
    *,
    settings: Settings,
    options: EvalOptions,
    trainset: Sequence[dspy.Example] | None = None,
    devset: Sequence[dspy.Example] | None = None,
    dev_fraction: float = 0.3,
    evaluate_before: bool = True,
    progress: Progress | None = None,
) -> CompileReport:
    """Compile ``program`` for ``benchmark`` and report dev scores before and after.

    Args:
        program: a program whose roles have their models (``apply_assignment``).
        benchmark: gives the trainset (``train_episodes``) and the metric (``score``).
        optimizer: which optimizer, with its budget, teacher and seed.
        settings: where ``trainsets/`` lives.
        options: the benchmark options (data directory, mode).
        trainset: examples to use instead of the benchmark's trainset.
        devset: dev examples; by default a seeded ``dev_fraction`` of the trainset.
        dev_fraction: share of the trainset kept for dev when ``devset`` is None.
        evaluate_before: also score the uncompiled program (doubles the dev cost).
        progress: called with (finished, total) dev steps while each dev score is measured.

    Returns:
        The report; ``report.program`` has the same models as ``program``.

    Raises:
        ConfigError: for an empty or unsplittable trainset, or a program without models.
    """
    started = time.perf_counter()
    if any(p.lm is None for p in program.predictors()) and dspy.settings.lm is None:
        raise ConfigError(
            "the program has roles without a model; call apply_assignment() "
            "(or pass --model) before compiling"
        )
    examples = (
        list(trainset) if trainset is not None else load_trainset(benchmark, settings, options)
    )
    digest = trainset_sha256([*examples, *(devset or [])])
    if devset is None:
        train, dev = split_trainset(examples, dev_fraction=dev_fraction, seed=optimizer.seed)
    else:
        train, dev = examples, list(devset)
    episodes, threads = dev_episodes(dev), optimizer.num_threads
    before = (
        score_program(benchmark, program, episodes, num_threads=threads, progress=progress)
        if evaluate_before
        else None
    )
    logger.info("compiling %s with %s on %d examples", benchmark.name, optimizer.name, len(train))
    metric = BenchmarkMetric(benchmark, program.coerce_state)
    compiled = optimize(optimizer, program, train, metric)
    reattach_models(program, compiled)
    after = score_program(benchmark, compiled, episodes, num_threads=threads, progress=progress)
    return CompileReport(
        program=compiled,
        config=optimizer,
        before=before,
        after=after,
        n_train=len(train),
        n_dev=len(dev),
        trainset_sha256=digest,
        seconds=round(time.perf_counter() - started, 2),
    )


def reattach_models(source: FreyrProgram, compiled: FreyrProgram) -> None:
    """Give ``compiled`` the LMs and assignment of ``source``, predictor by predictor.

    ``LabeledFewShot``/``BootstrapFewShot``/``BootstrapRS`` return ``reset_copy()``, which
    drops every LM, and SIMBA runs on one shared LM; the source's own LMs are put back.
    """
    lms = {name: p.lm for name, p in source.named_predictors()}
    for name, predictor in compiled.named_predictors():
        predictor.lm = lms.get(name)
    compiled.assignment = dict(source.assignment)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value
