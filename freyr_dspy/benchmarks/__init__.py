"""The built-in benchmarks - ``llmaker/``, ``nlt/``, ``callnavi/``, ``todo.py`` - and the registry.

Each is a plugin (``freyr_dspy.registry``): it registers its domain, roles, strategies and
benchmark when its plugin module is imported, which happens the first time a registry misses a
name. The ``Benchmark`` protocol and the registry are defined one level up, in
``freyr_dspy.benchmark``, below the evaluation and compile packages the built-ins import (the
core never imports a benchmark); they are re-exported here for users.
"""

from __future__ import annotations

from freyr_dspy.benchmark import (
    BENCHMARKS,
    Benchmark,
    Episode,
    EvalOptions,
    Step,
    StepScore,
    get_benchmark,
    load_all,
    register_benchmark,
)

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Episode",
    "EvalOptions",
    "Step",
    "StepScore",
    "get_benchmark",
    "load_all",
    "register_benchmark",
]
