"""Blamed values (``Freyr(exclude_blamed=True)``) on the real embedded SmolLM2.

tests/test_blame.py checks the grammar text; here llama.cpp samples under it: a door that is
locked whatever side is tried must be tried from a different side on every attempt.
"""

from __future__ import annotations

from typing import Literal

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies.freyr import Freyr
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"


def enter_vault(side: Literal["north", "south", "east", "west"]) -> str:
    """Enter the vault through one of its doors.

    Args:
        side: the door to use.
    """
    raise ValueError(f"the {side!r} door is locked")


def sides_tried(exclude_blamed: bool) -> list[str]:
    program = FreyrProgram(
        "todo",
        strategy=Freyr(confirm=False, exclude_blamed=exclude_blamed),
        toolbox=Toolbox([Tool.from_function(enter_vault)]),
        max_retries=3,
    )
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    program.apply_assignment(dict.fromkeys(program.role_names, greedy))
    result = program(message="Enter the vault").result
    calls = [call for call in result.calls if call.tool == "enter_vault"]
    return [error.split("'")[1] for call in calls for error in call.errors if "door" in error]


def test_every_retry_tries_a_side_no_error_has_blamed_yet() -> None:
    tried = sides_tried(exclude_blamed=True)
    assert len(tried) >= 2, tried  # greedy SmolLM2 neither plans another tool nor gives up
    assert len(set(tried)) == len(tried), tried
