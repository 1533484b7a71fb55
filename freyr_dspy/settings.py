"""One frozen Settings object, built in one place from explicit values or the environment."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_MODEL", "FAST_MODEL", "Settings", "default_model_cache_dir"]

#: The default model of every role: capable of the task, in-process, installed by pip.
DEFAULT_MODEL = "embedded/qwen2.5-coder-1.5b"
#: About twice as fast, the natural student for compiling.
FAST_MODEL = "embedded/qwen2.5-coder-0.5b"


def default_model_cache_dir() -> Path:
    """The model cache used when nothing else is configured: ``~/.cache/freyr-dspy/models``."""
    return Path.home() / ".cache" / "freyr-dspy" / "models"


class Settings(BaseModel):
    """Where freyr reads and writes, and the defaults every command shares.

    Precedence: explicit argument > CLI flag > ``FREYR_*`` environment variable > default.
    Library functions take a ``Settings`` (or the fields they need); nothing reads the
    environment at import time.
    """

    model_config = ConfigDict(frozen=True)

    project_dir: Path = Path()
    data_dir: Path | None = None
    default_model: str = DEFAULT_MODEL
    num_threads: int = 1
    seed: int = 0
    cache: bool = False
    #: Where embedded models split across packages are assembled (about 1.6 GB for both Qwens).
    model_cache_dir: Path = Field(default_factory=default_model_cache_dir)

    @property
    def signatures_dir(self) -> Path:
        """Folder of the role signature dumps."""
        return self.project_dir / "signatures"

    @property
    def trainsets_dir(self) -> Path:
        """Folder of the project's own training/dev examples."""
        return self.project_dir / "trainsets"

    @property
    def compiled_dir(self) -> Path:
        """Folder of compiled program artifacts."""
        return self.project_dir / "compiled"

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> Settings:
        """Build settings from ``FREYR_*`` variables; explicit ``overrides`` win when not None."""
        values: dict[str, object] = {}
        env_map = {
            "FREYR_PROJECT_DIR": "project_dir",
            "FREYR_DATA_DIR": "data_dir",
            "FREYR_MODEL": "default_model",
            "FREYR_NUM_THREADS": "num_threads",
            "FREYR_SEED": "seed",
            "FREYR_CACHE": "cache",
            "FREYR_MODEL_CACHE": "model_cache_dir",
        }
        for var, field in env_map.items():
            if environ.get(var):
                values[field] = environ[var]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)

    def resolve_data_dir(self) -> Path:
        """Return the benchmark data directory: explicit/env value, else ``../shared/benchmarks``.

        Raises:
            ConfigError: when no data directory exists; the message names the flag to use.
        """
        from freyr_dspy.errors import ConfigError

        candidate = self.data_dir or (self.project_dir.resolve().parent / "shared" / "benchmarks")
        if not candidate.is_dir():
            raise ConfigError(
                f"benchmark data directory {str(candidate)!r} not found; "
                "pass --data DIR or set FREYR_DATA_DIR"
            )
        return candidate
