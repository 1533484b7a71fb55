"""Helpers for the LLMaker tests: the toolbox and levels built by calling it."""

from __future__ import annotations

from typing import Any

from freyr_dspy.benchmarks.llmaker import Level, make_toolbox

TOOLBOX = make_toolbox()
STATS = {"species": "Unknown", "dodge": 0.5, "prot": 0.5, "spd": 0.5}


def apply(level: Level, *calls: tuple[str, dict[str, Any]]) -> Level:
    """Run tool calls in order; every one must succeed."""
    for name, arguments in calls:
        execution = TOOLBOX.execute(name, arguments, level)
        assert execution.outcome.ok, execution.outcome.message
        level = execution.state
    return level


def room(name: str, room_from: str = "", direction: str = "") -> tuple[str, dict[str, Any]]:
    return "create_room", {
        "name": name,
        "description": f"The {name}",
        "room_from": room_from,
        "direction": direction,
    }


def enemy(area: str, name: str, hp: float = 5.0, cell: int = -1) -> tuple[str, dict[str, Any]]:
    return "add_enemy", {
        "room_name": area,
        "name": name,
        "description": f"A {name}",
        "hp": hp,
        "cell_index": cell,
        **STATS,
    }
