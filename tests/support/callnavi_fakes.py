"""CallNavi programs over the fixture data (``tests/data/callnavi``), every role on one fake."""

from __future__ import annotations

from collections.abc import Callable

from freyr_dspy.benchmarks.callnavi._domain import CALLNAVI, CallNaviProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import Answer, FakeCall
from tests.support.paths import DATA_DIR

FIXTURES = DATA_DIR / "callnavi"

Responder = Callable[[FakeCall], Answer | None]


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
