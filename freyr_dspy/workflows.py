r"""``compile`` and ``evaluate``: the DSPy-style entry points on a user's own examples.

    program = FreyrProgram.for_model("embedded/qwen2.5-coder-0.5b", toolbox=box)  # its preset
    summary = freyr_dspy.evaluate(program, examples)          # an EvalSummary
    outcome = freyr_dspy.compile(program, examples, test=held_out)   # CompileSettings(...)
    print(*outcome.lines(), sep="\n")                         # candidates, decision, test scores
    freyr_dspy.save(outcome.program, "compiled/mine.json", outcome.meta)

Examples are dicts in the dataset format (``freyr_dspy.datasets._format``), ``CallExample``s
or ``dspy.Example``s with the same fields; each is checked against the program's tools (or
its own ``tools``) first. ``freyr compile/eval --tools ... --examples ...`` run the same code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dspy

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.datasets import DEFAULT_TOOLBOX, CallExample, ToolCallBenchmark, rows_from
from freyr_dspy.evaluation import EvalSummary, Progress, score_program
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import Settings

if TYPE_CHECKING:
    from freyr_dspy.compiling import CompileOutcome, CompileSettings
    from freyr_dspy.compiling import Progress as CompileProgress

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
    settings: CompileSettings | None = None,
    project: Settings | None = None,
    progress: CompileProgress | None = None,
) -> CompileOutcome:
    """Fit ``program`` to ``examples``: its margins, switches and demos, with a guard.

    ``program`` is the baseline - what you have without compiling, typically
    ``FreyrProgram.for_model(model, toolbox=...)``, the model's preset. It is scored on every
    example first; then what its failures call for is tried (margins fitted to its scored
    checks, switches, a contrastive demo pool of your examples), each candidate scored on
    every example as the program that would ship. The best is returned only when it beats
    the baseline by a practical margin without losing a kind of request or most toolboxes;
    else the baseline is, and ``outcome.lines()`` says why. The study is resumable: the same
    call continues where an interrupted one stopped.

    Args:
        program: the baseline program, with models for its roles.
        examples: labelled examples (``calls`` given, ``[]`` for no tool).
        test: held-out examples, scored before (baseline) and after; never used to choose.
        settings: the budget and what the compile may try (``CompileSettings``).
        project: project folders (default: the current directory's).
        progress: told after every scored row (``ProgressEvent``).

    Returns:
        The outcome: ``program`` (to ship), ``candidate``, ``choice``, ``trials``, scores.

    Raises:
        DataError: for the first bad example.
        ConfigError: a program without models, too few examples, an unknown switch.
    """
    from freyr_dspy.compiling import fit_program

    benchmark = _benchmark(program, examples)
    held_out = _benchmark(program, test).episodes(_NO_DATA) if test is not None else None
    return fit_program(
        program,
        benchmark,
        options=_NO_DATA,
        project=project or Settings(),
        settings=settings,
        test=held_out,
        progress=progress,
    )


def _benchmark(
    program: FreyrProgram, examples: Examples, *, execute: bool = False
) -> ToolCallBenchmark:
    rows = rows_from(examples, {DEFAULT_TOOLBOX: program.toolbox})
    return ToolCallBenchmark(rows=rows, toolbox=program.toolbox, execute=execute)
