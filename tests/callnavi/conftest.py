from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from freyr_dspy.benchmarks.callnavi.domain import CALLNAVI, CallNaviProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import Answer, FakeCall, FunctionLM, register_fake, unregister_fake

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "callnavi"

Responder = Callable[[FakeCall], Answer | None]


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


def make_program(
    strategy: str, model: str = "fake/callnavi", sampling: Sampling | None = None, **options: object
) -> CallNaviProgram:
    """A CallNavi program over the fixture data, every role on ``model``."""
    program = CallNaviProgram(
        CALLNAVI,
        strategy=make_strategy(strategy, **options),
        max_retries=0,
        data_dir=FIXTURES,
    )
    spec = RoleModel(model=model, sampling=sampling or Sampling())
    program.apply_assignment({role: spec for role in program.role_names})
    return program


PETS = {"domain": "pets", "data_dir": str(FIXTURES)}
