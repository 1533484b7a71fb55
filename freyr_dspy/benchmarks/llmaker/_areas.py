"""Finding rooms, corridors and encounters by the names a model writes, with helpful errors.

Every lookup failure names what does exist, so the model's next attempt can pick a valid
name instead of guessing again.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._config import fail, require
from freyr_dspy.benchmarks.llmaker._models import (
    DIRECTIONS,
    Corridor,
    Encounter,
    Enemy,
    Level,
    Room,
)

__all__ = [
    "check_cell",
    "corridor_names",
    "get_corridor",
    "get_encounter",
    "get_enemy",
    "get_room",
    "parse_direction",
    "place",
    "room_names",
]


def room_names(level: Level) -> str:
    """The rooms of the level as a comma-separated list ("none" when empty)."""
    return ", ".join(r.name for r in level.rooms) or "none"


def corridor_names(level: Level) -> str:
    """The corridors of the level as a comma-separated list ("none" when empty)."""
    return ", ".join(c.name for c in level.corridors) or "none"


def get_room(level: Level, name: str, argument: str = "name") -> Room:
    """Return the room called ``name``.

    Raises:
        ToolError: when there is none (a corridor name gets its own hint).
    """
    room = level.room(name)
    if room is None:
        hint = " (that is a corridor)" if level.corridor(name) else ""
        fail(f"{argument} {name!r} is not a room of the level{hint}; rooms: {room_names(level)}.")
    return room


def get_corridor(level: Level, name: str, argument: str = "corridor_name") -> Corridor:
    """Return the corridor called ``name``.

    Raises:
        ToolError: when there is none (a room name gets the hint that traps need corridors).
    """
    corridor = level.corridor(name)
    if corridor is None:
        hint = " - it looks like a room, but this needs a corridor" if level.room(name) else ""
        fail(
            f"{argument} {name!r} is not a corridor of the level{hint}; corridors: "
            f"{corridor_names(level)}."
        )
    return corridor


def check_cell(corridor: Corridor, cell_index: int) -> None:
    """Reject a cell index outside ``1..length`` of a corridor.

    Raises:
        ToolError: quoting the valid range.
    """
    require(
        1 <= cell_index <= corridor.length,
        f"cell_index must be between 1 and {corridor.length} for corridor "
        f"{corridor.name!r}; got {cell_index}.",
    )


def get_encounter(
    level: Level, area: str, cell_index: int, argument: str = "room_name"
) -> Encounter:
    """Return the encounter of a room (cell_index ignored) or of one corridor cell.

    Raises:
        ToolError: for an unknown area or a cell outside the corridor.
    """
    room = level.room(area)
    if room is not None:
        return room.encounter
    corridor = level.corridor(area)
    if corridor is None:
        fail(
            f"{argument} {area!r} is not a room or corridor of the level; rooms: "
            f"{room_names(level)}; corridors: {corridor_names(level)}."
        )
    check_cell(corridor, cell_index)
    return corridor.cells[cell_index - 1]


def place(area: str, level: Level, cell_index: int) -> str:
    """Describe where an entity is, for confirmation messages."""
    return f"{area} in cell {cell_index}" if level.corridor(area) else area


def get_enemy(encounter: Encounter, name: str, area: str) -> Enemy:
    """Return the enemy called ``name`` in an encounter.

    Raises:
        ToolError: listing the enemies that are there.
    """
    enemy = next((e for e in encounter.enemies if e.name == name), None)
    if enemy is None:
        present = ", ".join(e.name for e in encounter.enemies) or "none"
        fail(f"there is no enemy {name!r} in {area}; enemies there: {present}.")
    return enemy


def parse_direction(direction: str) -> str:
    """Normalise a direction (case and spaces ignored).

    Raises:
        ToolError: for anything but north, south, east or west.
    """
    value = direction.strip().lower()
    require(
        value in DIRECTIONS,
        f"direction must be one of north, south, east, west; got {direction!r}.",
    )
    return value
