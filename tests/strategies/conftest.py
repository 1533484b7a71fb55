"""Fixtures shared by the strategy tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import FakeEngine, register_fake, unregister_fake


@pytest.fixture
def freyr_on_fake() -> Iterator[Callable[..., FreyrProgram]]:
    """Build a todo program running ``freyr`` with ``settings``, every role played by ``engine``."""
    names: list[str] = []

    def make(engine: FakeEngine, **settings: bool) -> FreyrProgram:
        prog = FreyrProgram("todo", strategy=make_strategy("freyr", **settings))
        name = f"freyr_{id(engine)}"
        register_fake(name, engine)
        names.append(name)
        return prog.apply_assignment(
            dict.fromkeys(prog.role_names, RoleModel(model=f"fake/{name}"))
        )

    yield make
    for name in names:
        unregister_fake(name)
