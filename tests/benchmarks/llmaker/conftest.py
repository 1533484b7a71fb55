"""Fixtures of the LLMaker tests: a small level built with the tools, the data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from freyr_dspy.benchmarks.llmaker._models import Level
from tests.support.llmaker_helpers import apply, room


@pytest.fixture
def two_rooms() -> Level:
    """West Room (0,0) -east-> East Room (3,0); the current area is East Room."""
    return apply(Level(), room("West Room"), room("East Room", "West Room", "east"))


@pytest.fixture
def llmaker_data(data_dir: Path) -> Path:
    folder = data_dir / "llmaker"
    if not (folder / "test_cases.json").is_file():
        pytest.skip(f"no LLMaker test set under {data_dir}")
    return folder
