from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from freyr_dspy.testing import FunctionLM, register_fake, unregister_fake
from tests.support.callnavi_fakes import FIXTURES, Responder


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def fake_lm() -> Iterator[Callable[[Responder], FunctionLM]]:
    """Register a FunctionLM as ``fake/callnavi`` for the test."""

    def install(fn: Responder) -> FunctionLM:
        engine = FunctionLM(fn)
        register_fake("callnavi", engine)
        return engine

    yield install
    unregister_fake("callnavi")
