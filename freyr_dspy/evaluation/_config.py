"""``EvalConfig``: what one evaluation runs, and the fingerprint that guards resuming it.

The fingerprint covers everything that changes what a unit would produce (models, sampling,
mode, benchmark options, compiled program files) and nothing that only changes *which*
units run (benchmarks, strategies, number of runs, ``limit``, jobs). So a finished
evaluation can be extended with more runs or another strategy and keep its finished units,
while a changed model or mode cannot silently mix with old results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.errors import ConfigError
from freyr_dspy.settings import DEFAULT_MODEL, Settings

__all__ = ["EXTRA_OPTIONS", "PAPER_SAMPLING", "EvalConfig", "parse_benchmark_options"]

Mode = Literal["bootstrap", "iterative"]

#: The FREYR paper's sampling (temperature 0.8, top-p 0.6): runs must differ to be worth
#: repeating. Explicit ``--sampling`` specs come after these and override them.
PAPER_SAMPLING: tuple[str, ...] = ("temperature=0.8", "top_p=0.6")

#: Benchmark-specific options (``EvalOptions.extra``); a benchmark reads the ones it knows.
EXTRA_OPTIONS: tuple[str, ...] = (
    "domains",
    "difficulty",
    "prompt",
    "tools_file",
    "state_view",
    "inner",
)


def parse_benchmark_options(specs: Iterable[str]) -> dict[str, Any]:
    """Read ``KEY=VALUE`` benchmark options; a value is JSON when it parses (``3``, ``true``).

    Raises:
        ConfigError: for a spec without ``=`` or without a key.
    """
    options: dict[str, Any] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad option {spec!r}; expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


@dataclass(frozen=True)
class EvalConfig:
    """One evaluation: benchmarks x contestants x runs x episodes.

    Args:
        benchmarks: registered benchmark names.
        data_dir: the benchmark data directory.
        strategies: strategy names; empty means each benchmark's own list (or none when
            ``programs`` are given).
        programs: compiled program artifacts to evaluate beside the strategies.
        runs: independent repetitions of every episode.
        mode: ``bootstrap`` (each step from its given state) or ``iterative`` (state carried).
        limit: passed to the benchmarks (at most N episodes).
        extra: benchmark-specific options (see ``EXTRA_OPTIONS``).
        default_model: the model of every role no spec names.
        model_specs: ``ROLE=ID`` / ``ID`` specs; a role spec applies to the strategies that
            have that role.
        sampling_specs: ``[ROLE.]PARAM=VALUE`` specs, applied in order.
        api_base: server URL for OpenAI-compatible or Ollama models.
        jobs: units run at the same time (threads).
        settings: where ``compiled/`` is, for loading ``programs`` (default: ``Settings()``).
    """

    benchmarks: tuple[str, ...]
    data_dir: Path
    strategies: tuple[str, ...] = ()
    programs: tuple[Path, ...] = ()
    runs: int = 1
    mode: Mode = "bootstrap"
    limit: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    default_model: str = DEFAULT_MODEL
    model_specs: tuple[str, ...] = ()
    sampling_specs: tuple[str, ...] = PAPER_SAMPLING
    api_base: str | None = None
    jobs: int = 1
    settings: Settings | None = None

    def options(self) -> EvalOptions:
        """The options every benchmark of this evaluation receives."""
        return EvalOptions(
            data_dir=self.data_dir, mode=self.mode, limit=self.limit, extra=dict(self.extra)
        )

    def describe(self) -> dict[str, Any]:
        """Everything about this evaluation, JSON-ready (saved with the results)."""
        return {
            "benchmarks": list(self.benchmarks),
            "strategies": list(self.strategies),
            "programs": [str(p) for p in self.programs],
            "runs": self.runs,
            "mode": self.mode,
            "limit": self.limit,
            "data_dir": str(self.data_dir),
            "jobs": self.jobs,
            **self.result_settings(),
        }

    def result_settings(self) -> dict[str, Any]:
        """The settings that change what a unit produces (the fingerprinted part)."""
        return {
            "default_model": self.default_model,
            "model_specs": list(self.model_specs),
            "sampling_specs": list(self.sampling_specs),
            "api_base": self.api_base,
            "mode": self.mode,
            "extra": _jsonable(dict(self.extra)),
            "program_files": {str(p): self._program_digest(p) for p in self.programs},
        }

    def _program_digest(self, path: Path) -> str | None:
        # a bare name is looked up in compiled/, as the artifact loader does
        if not path.exists() and not path.is_absolute():
            path = (self.settings or Settings()).compiled_dir / path
        return _file_digest(path)

    def fingerprint(self) -> str:
        """A short stable hash of ``result_settings``."""
        text = json.dumps(self.result_settings(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _file_digest(path: Path) -> str | None:
    """Hash a program file so that recompiling it invalidates old results."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None  # the loader reports the missing file with a proper message
