"""Grid geometry of a level: placing rooms and corridors, clashes, moving parts of a level.

Rooms and corridor cells occupy one grid cell each. A room created from another sits
``length + 1`` cells away in the chosen direction, with the corridor's cells in between.
Nothing may share a cell; rooms may sit side by side without being connected.
"""

from __future__ import annotations

from collections.abc import Iterable

from freyr_dspy.benchmarks.llmaker._config import fail
from freyr_dspy.benchmarks.llmaker._models import OFFSETS, Corridor, Level

__all__ = [
    "check_free",
    "check_move",
    "corridor_cells",
    "inner_corridors",
    "reachable",
    "shift",
    "step",
]

Point = tuple[int, int]


def step(origin: Point, direction: str, distance: int) -> Point:
    """The cell ``distance`` steps from ``origin`` in ``direction``."""
    dx, dy = OFFSETS[direction]
    return origin[0] + dx * distance, origin[1] + dy * distance


def corridor_cells(origin: Point, direction: str, length: int) -> list[Point]:
    """The cells of a corridor leaving ``origin`` in ``direction`` (cell 1 first)."""
    return [step(origin, direction, i) for i in range(1, length + 1)]


def check_free(
    level: Level,
    room_cell: Point | None,
    cells: Iterable[Point],
    *,
    ignore_rooms: Iterable[str] = (),
    ignore_corridors: Iterable[str] = (),
) -> None:
    """Reject a placement whose room cell or corridor cells are already occupied.

    Args:
        level: the level the new parts go into.
        room_cell: the new room's cell, or None when no room is placed.
        cells: the new corridor cells.
        ignore_rooms: rooms whose cells do not count (they are being moved).
        ignore_corridors: corridors whose cells do not count (they are being moved).

    Raises:
        ToolError: naming the occupied cell and what occupies it.
    """
    taken = _occupied(level, set(ignore_rooms), set(ignore_corridors))
    if room_cell is not None and room_cell in taken:
        fail(
            f"the new room's position {room_cell} is already occupied by {taken[room_cell]}; "
            "choose another direction or room_from."
        )
    for cell in cells:
        if cell in taken or cell == room_cell:
            what = taken.get(cell, "the new room")
            fail(
                f"the corridor would cross {what} at {cell}; choose another direction or room_from."
            )


def _occupied(level: Level, rooms: set[str], corridors: set[str]) -> dict[Point, str]:
    taken: dict[Point, str] = {
        (r.coords[0], r.coords[1]): f"room {r.name}" for r in level.rooms if r.name not in rooms
    }
    for corridor in level.corridors:
        if corridor.name not in corridors:
            taken.update({(x, y): f"corridor {corridor.name}" for x, y in corridor.coords})
    return taken


def reachable(level: Level, start: str, without: Corridor) -> set[str]:
    """Rooms reachable from ``start`` through corridors other than ``without``."""
    seen, frontier = {start}, [start]
    while frontier:
        room = frontier.pop()
        for corridor in level.corridors:
            if corridor.name == without.name or not corridor.joins(room):
                continue
            other = corridor.room_to if corridor.room_from == room else corridor.room_from
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return seen


def shift(level: Level, rooms: set[str], offset: Point) -> None:
    """Move ``rooms`` and the corridors between them by ``offset`` (in place)."""
    dx, dy = offset
    for room in level.rooms:
        if room.name in rooms:
            room.coords = (room.coords[0] + dx, room.coords[1] + dy)
    for corridor in level.corridors:
        if corridor.room_from in rooms and corridor.room_to in rooms:
            corridor.coords = [(x + dx, y + dy) for x, y in corridor.coords]


def inner_corridors(level: Level, rooms: set[str]) -> set[str]:
    """Names of the corridors whose two rooms are both in ``rooms``."""
    return {c.name for c in level.corridors if c.room_from in rooms and c.room_to in rooms}


def check_move(
    level: Level, rooms: set[str], corridors: set[str], offset: Point, new_cells: list[Point]
) -> None:
    """Reject moving ``rooms`` (and ``corridors`` among them) by ``offset`` onto taken cells.

    The corridor being reshaped gets ``new_cells``; they must be free as well.

    Raises:
        ToolError: naming the clash.
    """
    static = _occupied(level, rooms, corridors)
    moved: dict[Point, str] = {}
    for room in level.rooms:
        if room.name in rooms:
            moved[(room.coords[0] + offset[0], room.coords[1] + offset[1])] = f"room {room.name}"
    for corridor in level.corridors:
        if corridor.name in corridors and corridor.room_from in rooms:
            moved.update(
                {
                    (x + offset[0], y + offset[1]): f"corridor {corridor.name}"
                    for x, y in corridor.coords
                }
            )
    for cell in new_cells:
        clash = static.get(cell) or moved.get(cell)
        if clash:
            fail(f"the corridor would cross {clash} at {cell}; choose another direction or length.")
    for cell, what in moved.items():
        if cell in static:
            fail(
                f"moving {what} to {cell} would clash with {static[cell]}; choose another "
                "direction or length."
            )
