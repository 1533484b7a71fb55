"""A real ``freyr serve`` app on 127.0.0.1 in a thread, over programs answered by fakes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from freyr_dspy.serve import ServedProgram
from freyr_dspy.testing import FunctionLM
from tests.support.serve_helpers import make_program, serving


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, FunctionLM]]:
    """One server for a module's tests: the ``weather`` program, and its fake."""
    program, engine = make_program()
    with serving(ServedProgram("weather", program)) as base:
        yield base, engine


@pytest.fixture
def base_url(served: tuple[str, FunctionLM]) -> str:
    return served[0]


@pytest.fixture
def fake(served: tuple[str, FunctionLM]) -> FunctionLM:
    """The module server's fake, with no calls recorded yet."""
    served[1].calls.clear()
    return served[1]
