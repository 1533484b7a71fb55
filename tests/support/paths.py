"""Where the project's folders are, for tests in any folder."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
TESTS_DIR = PROJECT_DIR / "tests"
#: Small fixture data of the tests (never the real ``trainsets/`` or benchmark data).
DATA_DIR = TESTS_DIR / "data"
SUPPORT_DIR = TESTS_DIR / "support"
COMPILED_DIR = PROJECT_DIR / "compiled"
SCRIPTS_DIR = PROJECT_DIR / "scripts"
TRAINSETS_DIR = PROJECT_DIR / "trainsets"


def real_data_dir() -> Path:
    """Where the real benchmark data would be: ``$FREYR_DATA_DIR`` or ``../shared/benchmarks``."""
    env = os.environ.get("FREYR_DATA_DIR")
    return Path(env) if env else PROJECT_DIR.parent / "shared" / "benchmarks"
