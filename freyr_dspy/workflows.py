r"""``compile`` and ``evaluate``: the DSPy-style entry points on a user's own examples.

    program = FreyrProgram.for_model("embedded/qwen2.5-coder-0.5b", toolbox=box)  # its preset
    summary = freyr_dspy.evaluate(program, examples)          # an EvalSummary
    outcome = freyr_dspy.compile(program, examples, test=held_out)
    print(*outcome.lines(), sep="\n")                         # trials, the decision, test scores
    freyr_dspy.save(outcome.program, "compiled/mine.json", outcome.meta)

Examples are dicts in the dataset format (``freyr_dspy.datasets._format``), ``CallExample``s
or ``dspy.Example``s with the same fields; each is checked against the program's tools (or
its own ``tools``) first. ``freyr compile/eval --tools ... --examples ...`` run the same code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.datasets import CallExample, ToolCallBenchmark, rows_from
from freyr_dspy.datasets._toolboxes import DEFAULT_TOOLBOX
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation._scoring import EvalSummary, Progress, score_program
from freyr_dspy.program import FreyrProgram
from freyr_dspy.search._compile_study import DEFAULT_TIMEOUT, DEFAULT_TRIALS, CompileOutcome
from freyr_dspy.search._folds import DEFAULT_FOLDS
from freyr_dspy.search._program_space import DEMO_OPTIMIZERS
from freyr_dspy.settings import Settings

__all__ = ["Examples", "compile", "evaluate"]

#: Examples as the Python API takes them.
Examples = Iterable[Mapping[str, Any] | CallExample | dspy.Example]

#: Benchmarks of in-memory examples read no data directory.
_NO_DATA = EvalOptions(data_dir=Path("."))


def evaluate(
    program: FreyrProgram,
    examples: Examples,
    *,
    execute: bool = False,
    num_threads: int = 1,
    progress: Progress | None = None,
) -> EvalSummary:
    """Score ``program`` on ``examples`` with the exact-call check.

    Args:
        program: a program with models for its roles.
        examples: labelled examples (``calls`` given, ``[]`` for no tool).
        execute: run tools that have functions instead of recording their calls.
        num_threads: examples run at once.
        progress: called with (finished, total) examples.

    Raises:
        DataError: for the first bad example (its position and problem).
    """
    benchmark = _benchmark(program, examples, execute=execute)
    episodes = benchmark.episodes(_NO_DATA)
    return score_program(benchmark, program, episodes, num_threads=num_threads, progress=progress)


def compile(  # the name DSPy users look for; shadows the builtin in this module only
    program: FreyrProgram,
    examples: Examples,
    *,
    test: Examples | None = None,
    trials: int = DEFAULT_TRIALS,
    timeout: float | None = DEFAULT_TIMEOUT,
    switches: Sequence[str] | None = None,
    optimizers: Sequence[str] = DEMO_OPTIMIZERS,
    max_demos: int = 4,
    demo_scope: Sequence[str] = ("plan", "deciding"),
    candidates: Mapping[str, Sequence[str]] | None = None,
    folds: int = DEFAULT_FOLDS,
    teacher: str | None = None,
    reflection: str | None = None,
    keep_tool_text: bool = False,
    seed: int = 0,
    storage: str | None = None,
    study_name: str | None = None,
    settings: Settings | None = None,
) -> CompileOutcome:
    """Fit ``program`` to ``examples``: a study of its switches, demos (and models) with a guard.

    ``program`` is the baseline - what you have without compiling, typically
    ``FreyrProgram.for_model(model, toolbox=...)``, the model's preset - and the study's first
    trial. Every configuration is scored on every example by cross-validation; the best is
    returned only when it beats the baseline by a margin the examples support (nested
    cross-validation, a one-sided sign test), else the baseline is, and ``outcome.lines()``
    says why. The study is resumable: the same call continues where an interrupted one stopped.

    Args:
        program: the baseline program, with models for its roles.
        examples: labelled examples (``calls`` given, ``[]`` for no tool).
        test: held-out examples, scored before (baseline) and after; never used to choose.
        trials: configurations to finish (the baseline included).
        timeout: seconds after which no new trial starts (None: no limit).
        switches: the strategy switches searched (default: all of the strategy's; ``()``:
            keep the baseline's).
        optimizers: the demo optimizers to choose among.
        max_demos: most demos per role a trial may have (0: no demos).
        demo_scope: ``plan`` (planning roles) and/or ``deciding`` (+ parameters).
        candidates: role (or ``"*"``) -> model ids, searched with their sampling.
        folds: cross-validation folds.
        teacher: the model that bootstraps demos (default: each role's own).
        reflection: the model that writes instructions, for ``gepa``/``mipro`` optimizers.
        keep_tool_text: keep the tools' catalog and specs in the demos.
        seed: seeds the folds, the sampler and the demos.
        storage: the study's storage (default: a journal under ``runs/compile``).
        study_name: the study's name (default: from what it fits).
        settings: project folders (default: the current directory's).

    Returns:
        The outcome: ``program`` (to ship), ``config``, ``choice``, ``trials`` and scores.

    Raises:
        DataError: for the first bad example.
        ConfigError: a program without models, too few examples, an unknown switch.
    """
    from freyr_dspy.search._compile_study import CompileBudget
    from freyr_dspy.search._fitting import FitOptions, fit_program
    from freyr_dspy.search._program_space import ProgramSpace, switch_names
    from freyr_dspy.search._space import SearchSpace
    from freyr_dspy.strategies import strategy_label

    benchmark = _benchmark(program, examples)
    label = strategy_label(program.strategy)
    searched = switch_names(label) if switches is None else tuple(switches)
    unknown = sorted(set(searched) - set(switch_names(label)))
    if unknown:
        raise ConfigError(f"switches {unknown} are not switches of {label}")
    models = (
        SearchSpace(candidates={r: tuple(m) for r, m in candidates.items()}, top_k=None)
        if candidates
        else None
    )
    space = ProgramSpace(
        baseline=label,
        switches=searched,
        optimizers=tuple(optimizers),
        max_demos=max_demos,
        demo_roles=tuple(demo_scope),  # type: ignore[arg-type]
        models=models,
    )
    held_out = _benchmark(program, test).episodes(_NO_DATA) if test is not None else None
    return fit_program(
        program,
        benchmark,
        space,
        options=_NO_DATA,
        settings=settings or Settings(),
        budget=CompileBudget(trials=trials, timeout=timeout),
        fit=FitOptions(
            folds=folds,
            seed=seed,
            teacher=teacher,
            reflection=reflection,
            keep_tool_text=keep_tool_text,
            storage=storage,
            study_name=study_name,
        ),
        test=held_out,
    )


def _benchmark(
    program: FreyrProgram, examples: Examples, *, execute: bool = False
) -> ToolCallBenchmark:
    rows = rows_from(examples, {DEFAULT_TOOLBOX: program.toolbox})
    return ToolCallBenchmark(rows=rows, toolbox=program.toolbox, execute=execute)
