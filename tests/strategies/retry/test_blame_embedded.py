"""Blamed values (``freyr+exclude_blamed``, ``choose_listed``) on the real SmolLM2.

tests/test_blame.py checks the grammar text; here llama.cpp samples under it: a door that no
side and key open must be tried with another side (an enum) and another key (a free text) on
every attempt; a room the error says does not exist is followed by one the error lists.
"""

from __future__ import annotations

import re
from typing import Literal

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting._narrowing import LONGEST_EXCLUDED
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"


def enter_vault(side: Literal["north", "south", "east", "west"], key: str) -> str:
    """Enter the vault through one of its doors.

    Args:
        side: the door to use.
        key: the name of the key that opens it.
    """
    raise ValueError(f"the {side!r} side does not open with the key {key!r}")  # blames both


def greedy_program(tool: Tool, strategy: Freyr) -> FreyrProgram:
    program = FreyrProgram("todo", strategy=strategy, toolbox=Toolbox([tool]), max_retries=3)
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    program.apply_assignment(dict.fromkeys(program.role_names, greedy))
    return program


def attempts() -> list[tuple[str, ...]]:
    """The (side, key) of each attempt, read back from the errors."""
    strategy = make_strategy("freyr", confirm=False, exclude_blamed=True)
    program = greedy_program(Tool.from_function(enter_vault), strategy)
    result = program(message="Enter the vault").result
    calls = [call for call in result.calls if call.tool == "enter_vault"]
    errors = [error for call in calls for error in call.errors]
    return [found.groups() for error in errors if (found := _DOOR.search(error))]


_DOOR = re.compile(r"the '(\w+)' side does not open with the key '([^']*)'")


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


def enter_room(room: str) -> str:
    """Walk into a room of the castle.

    Args:
        room: the room to enter.
    """
    if room != "Pantry":
        raise ValueError(f"room {room!r} is not a room of the castle; rooms: Attic, Pantry.")
    return "You are in the Pantry."


def test_after_an_unknown_room_every_retry_takes_a_room_the_error_listed() -> None:
    strategy = make_strategy("freyr", confirm=False, exclude_blamed=True, choose_listed=True)
    program = greedy_program(Tool.from_function(enter_room), strategy)
    result = program(message="Go into the kitchen").result
    [call] = [call for call in result.calls if call.tool == "enter_room"]
    tried = [found[1] for error in call.errors if (found := _ROOM.search(error))]
    retried = tried[1:] + ([call.arguments["room"]] if call.outcome.ok else [])
    assert call.outcome.ok or call.gave_up, (tried, call.outcome)
    assert retried and set(retried) <= {"Attic", "Pantry"}, tried
    assert len(set(retried)) == len(retried), tried  # Attic, refused, is not written again


_ROOM = re.compile(r"room '([^']*)' is not a room")
