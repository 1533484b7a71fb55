"""LLMaker: the Dungeon Despair level-editing domain and FREYR's T1-T5 benchmark.

Import ``freyr_dspy.benchmarks.llmaker._domain`` to register the ``llmaker`` domain and
``freyr_dspy.benchmarks.llmaker._benchmark`` to register the benchmark (the registries do it
lazily).
"""

from freyr_dspy.benchmarks.llmaker._config import BENCHMARK_CONFIG, PUBLIC_CONFIG, LevelConfig
from freyr_dspy.benchmarks.llmaker._functions import TOOL_NAMES, make_toolbox
from freyr_dspy.benchmarks.llmaker._levels import dumps_level, load_level, read_level, write_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.benchmarks.llmaker._render import render_original, render_rich

__all__ = [
    "BENCHMARK_CONFIG",
    "PUBLIC_CONFIG",
    "TOOL_NAMES",
    "Level",
    "LevelConfig",
    "dumps_level",
    "load_level",
    "make_toolbox",
    "read_level",
    "render_original",
    "render_rich",
    "write_level",
]
