"""Fixtures of the dataset tests: the weather toolbox, as a ``Toolbox`` and as a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.tools import Toolbox
from tests.support.dataset_helpers import WEATHER_TOOLS


@pytest.fixture
def box() -> Toolbox:
    return Toolbox.from_openai(WEATHER_TOOLS)


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(WEATHER_TOOLS), encoding="utf-8")
    return path
