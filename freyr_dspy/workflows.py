"""``compile`` and ``evaluate``: the DSPy-style entry points on a user's own examples.

    program = FreyrProgram(toolbox=box).apply_assignment(assignment)
    summary = freyr_dspy.evaluate(program, examples)          # an EvalSummary
    report = freyr_dspy.compile(program, examples, optimizer="bootstrap",
                                teacher="embedded/qwen2.5-coder-1.5b")
    freyr_dspy.save(report.program, "compiled/mine.json")

Examples are dicts in the dataset format (``freyr_dspy.datasets.format``), ``CallExample``s
or ``dspy.Example``s with the same fields; each is checked against the program's tools (or
its own ``tools``) first. ``freyr compile/eval --tools ... --examples ...`` run the same code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.compiling.compiler import CompileReport, compile_program
from freyr_dspy.compiling.dataset_demos import TOOL_TEXT_FIELDS, deciding_roles, tool_text_fields
from freyr_dspy.compiling.optimizers import OptimizerConfig
from freyr_dspy.datasets import CallExample, ToolCallBenchmark, rows_from
from freyr_dspy.datasets.toolboxes import DEFAULT_TOOLBOX
from freyr_dspy.evaluation.scoring import EvalSummary, Progress, score_program
from freyr_dspy.program import FreyrProgram
from freyr_dspy.settings import Settings

__all__ = [
    "TOOL_TEXT_FIELDS",
    "Examples",
    "compile",
    "deciding_roles",
    "evaluate",
    "tool_text_fields",
]

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
    optimizer: str = "labeled",
    teacher: str | None = None,
    reflection: str | None = None,
    dev: Examples | None = None,
    dev_fraction: float = 0.2,
    max_demos: int = 2,
    budget: int | None = None,
    seed: int = 0,
    keep_tool_text: bool = False,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> CompileReport:
    """Compile ``program`` on ``examples``; report dev scores before and after.

    Args:
        program: a program with models for its roles.
        examples: labelled training examples.
        optimizer: ``labeled``, ``bootstrap``, ``bootstrap_rs``, ``mipro``, ``gepa``, ...
        teacher: model id that bootstraps demos for a smaller student.
        reflection: model id that writes instructions (MIPROv2, GEPA, SIMBA).
        dev: dev examples; by default a seeded ``dev_fraction`` of ``examples``.
        dev_fraction: share of ``examples`` kept for dev when ``dev`` is None.
        max_demos: demos per role.
        budget: optimizer effort (candidate sets, trials, metric calls or steps).
        seed: seed of the split and of the optimizer.
        keep_tool_text: let demos keep the tool catalogs and specs they were shown
            (by default they are left out: the real request has them anyway).
        settings: project folders (default: from the environment's defaults).
        progress: called with (finished, total) dev examples while scoring.

    Returns:
        The report; ``report.program`` is the compiled program, with ``program``'s models.

    Raises:
        DataError: for the first bad example.
        ConfigError: a program without models, or too few examples to split.
    """
    benchmark = _benchmark(program, examples, dev=dev)
    config = OptimizerConfig(
        name=optimizer,  # type: ignore[arg-type]
        teacher=teacher,
        reflection=reflection,
        budget=budget,
        seed=seed,
        max_demos=max_demos,
        demo_roles=deciding_roles(program),
        demo_omit=() if keep_tool_text else tool_text_fields(program),
    )
    return compile_program(
        program,
        benchmark,
        config,
        settings=settings or Settings(),
        options=_NO_DATA,
        devset=benchmark.devset(),
        dev_fraction=dev_fraction,
        progress=progress,
    )


def _benchmark(
    program: FreyrProgram,
    examples: Examples,
    *,
    dev: Examples | None = None,
    execute: bool = False,
) -> ToolCallBenchmark:
    boxes = {DEFAULT_TOOLBOX: program.toolbox}
    rows = rows_from(examples, boxes)
    dev_rows: Sequence[Any] | None = rows_from(dev, boxes, source="dev") if dev else None
    return ToolCallBenchmark(rows=rows, dev_rows=dev_rows, toolbox=program.toolbox, execute=execute)
