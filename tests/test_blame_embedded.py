"""Blamed values (``Freyr(exclude_blamed=True)``) on the real embedded SmolLM2.

tests/test_blame.py checks the grammar text; here llama.cpp samples under it: a door that no
side and key open must be tried with another side (an enum) and another key (a free text) on
every attempt.
"""

from __future__ import annotations

import re
from typing import Literal

import pytest

from freyr_dspy.blame import LONGEST_EXCLUDED
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies.freyr import Freyr
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"


def enter_vault(side: Literal["north", "south", "east", "west"], key: str) -> str:
    """Enter the vault through one of its doors.

    Args:
        side: the door to use.
        key: the name of the key that opens it.
    """
    raise ValueError(f"the {side!r} door does not open with the key {key!r}")


def attempts() -> list[tuple[str, ...]]:
    """The (side, key) of each attempt, read back from the errors."""
    program = FreyrProgram(
        "todo",
        strategy=Freyr(confirm=False, exclude_blamed=True),
        toolbox=Toolbox([Tool.from_function(enter_vault)]),
        max_retries=3,
    )
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    program.apply_assignment(dict.fromkeys(program.role_names, greedy))
    result = program(message="Enter the vault").result
    calls = [call for call in result.calls if call.tool == "enter_vault"]
    errors = [error for call in calls for error in call.errors]
    return [found.groups() for error in errors if (found := _DOOR.search(error))]


_DOOR = re.compile(r"the '(\w+)' door does not open with the key '([^']*)'")


def test_every_retry_tries_a_side_and_a_key_no_error_has_blamed_yet() -> None:
    tried = attempts()
    assert len(tried) >= 2, tried  # greedy SmolLM2 neither plans another tool nor gives up
    sides, keys = zip(*tried, strict=True)
    assert len(set(sides)) == len(sides), tried
    # a key comes back only if it was too long for the pattern (SmolLM2 lengthens keys)
    for index, key in enumerate(keys):
        excluded = [k for k in keys[:index] if len(k) <= LONGEST_EXCLUDED]
        assert key not in excluded, tried
    assert len(set(keys)) >= 2, tried
