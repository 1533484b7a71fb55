"""Re-planning after a failed first call (``freyr+replan``) on the real embedded SmolLM2.

The fakes of tests/test_program.py check which plan wins; here a real model and adapter run
the second intent call, whose prompt carries the failure note.
"""

from __future__ import annotations

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"


def book_table(restaurant: str) -> str:
    """Book a table at a restaurant.

    Args:
        restaurant: name of the restaurant.
    """
    raise ValueError(f"{restaurant!r} takes no bookings")


def order_taxi(address: str) -> str:
    """Order a taxi to an address.

    Args:
        address: where the taxi should go.
    """
    raise ValueError("no taxi is free")


def test_a_first_call_that_always_fails_is_planned_again_on_the_real_model() -> None:
    tools = Toolbox([Tool.from_function(book_table), Tool.from_function(order_taxi)])
    program = FreyrProgram(
        "todo", strategy=make_strategy("freyr", replan=True), toolbox=tools, max_retries=0
    )
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    program.apply_assignment(dict.fromkeys(program.role_names, greedy))
    result = program(message="Book a table at Luigi's for tonight").result
    first = result.calls[0]
    assert first.tool in tools.names and not first.outcome.ok
    # asked once, then once more after the failure (the copy re-ask may add one each)
    assert 2 <= result.usage["intent"].lm_calls <= 4
    assert all(not call.outcome.ok for call in result.calls)
    assert result.failure is not None and result.failure.kind == "retries"
    assert result.reply  # the summary still reports what happened
