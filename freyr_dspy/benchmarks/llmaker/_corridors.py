"""Corridor functions: ``add_corridor``, ``remove_corridor``, ``update_corridor``.

In dungeon-despair-domain 34f4ac5 all three end in "Function ... not found." (they call a
``Level.get_corridor`` that no longer exists). Here they work as the original intended:

* ``add_corridor`` joins two existing rooms that lie exactly ``length + 1`` cells apart in
  ``direction``, through free cells and free direction slots on both rooms.
* ``remove_corridor`` accepts the two rooms in either order and frees both slots.
* ``update_corridor`` resizes and/or turns a corridor: everything beyond ``room_to`` moves
  with it, cells are cut or added at the end. A corridor inside a loop cannot move (its far
  side is anchored), and nothing may end up on an occupied cell.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._areas import corridor_names, get_room, parse_direction
from freyr_dspy.benchmarks.llmaker._config import LevelConfig, fail, require, require_text
from freyr_dspy.benchmarks.llmaker._geometry import (
    check_free,
    check_move,
    corridor_cells,
    inner_corridors,
    reachable,
    shift,
    step,
)
from freyr_dspy.benchmarks.llmaker._models import OPPOSITE, Corridor, Encounter, Level, Room, Slots

__all__ = ["CorridorFunctions"]


class CorridorFunctions:
    """The corridor-editing tools; the level arrives through ``state``."""

    config: LevelConfig

    def add_corridor(
        self,
        room_from_name: str,
        room_to_name: str,
        corridor_length: int,
        direction: str,
        state: Level,
    ) -> str:
        """Join two existing rooms with a new corridor.

        Args:
            room_from_name: the room the corridor starts from.
            room_to_name: the room the corridor leads to.
            corridor_length: number of cells, {min_corridor_length} to
                {max_corridor_length}; room_to must lie exactly corridor_length + 1 cells
                away from room_from.
            direction: direction from room_from to room_to: north, south, east or west.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_from_name=room_from_name, room_to_name=room_to_name, direction=direction)
        require(room_from_name != room_to_name, "a corridor must join two different rooms.")
        origin = get_room(state, room_from_name, "room_from_name")
        target = get_room(state, room_to_name, "room_to_name")
        existing = state.corridor_between(room_from_name, room_to_name)
        require(
            existing is None,
            f"the rooms are already joined by corridor {existing and existing.name!r}.",
        )
        self._check_length(corridor_length)
        side = parse_direction(direction)
        from_slots = state.connections.get(room_from_name) or Slots()
        to_slots = state.connections.get(room_to_name) or Slots()
        _check_slot(room_from_name, from_slots, side)
        _check_slot(room_to_name, to_slots, OPPOSITE[side])
        _check_distance(origin, target, side, corridor_length)
        cells = corridor_cells(origin.coords, side, corridor_length)
        check_free(state, None, cells)
        name = f"{room_from_name}-{room_to_name}"
        setattr(from_slots, side, room_to_name)
        setattr(to_slots, OPPOSITE[side], room_from_name)
        state.connections[room_from_name], state.connections[room_to_name] = from_slots, to_slots
        state.corridors.append(
            Corridor(
                name=name,
                room_from=room_from_name,
                room_to=room_to_name,
                direction=side,  # type: ignore[arg-type]
                length=corridor_length,
                coords=cells,
                cells=[Encounter() for _ in cells],
            )
        )
        state.current_room = name
        return f"Added corridor {name} to the level."

    def remove_corridor(self, room_from_name: str, room_to_name: str, state: Level) -> str:
        """Remove the corridor between two rooms, with everything in it.

        Args:
            room_from_name: one room the corridor joins.
            room_to_name: the other room the corridor joins.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_from_name=room_from_name, room_to_name=room_to_name)
        corridor = state.corridor_between(room_from_name, room_to_name)
        if corridor is None:
            fail(
                f"there is no corridor between {room_from_name!r} and {room_to_name!r}; "
                f"corridors: {corridor_names(state)}."
            )
        state.corridors.remove(corridor)
        for room, side in (
            (corridor.room_from, corridor.direction),
            (corridor.room_to, OPPOSITE[corridor.direction]),
        ):
            if room in state.connections:
                setattr(state.connections[room], side, "")
        if state.current_room == corridor.name:
            state.current_room = corridor.room_from
        return f"Removed corridor {corridor.name} from the level."

    def update_corridor(
        self,
        room_from_name: str,
        room_to_name: str,
        corridor_length: int,
        direction: str,
        state: Level,
    ) -> str:
        """Change the length and/or direction of a corridor; rooms beyond it move along.

        Args:
            room_from_name: the room the corridor starts from.
            room_to_name: the room the corridor leads to.
            corridor_length: new number of cells, {min_corridor_length} to
                {max_corridor_length}.
            direction: new direction from room_from to room_to: north, south, east or west.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_from_name=room_from_name, room_to_name=room_to_name, direction=direction)
        self._check_length(corridor_length)
        corridor = _stored_corridor(state, room_from_name, room_to_name)
        side = parse_direction(direction)
        moving = reachable(state, corridor.room_to, without=corridor)
        require(
            corridor.room_from not in moving,
            f"corridor {corridor.name!r} is part of a loop, so the rooms beyond it cannot "
            "move; remove another corridor of the loop first.",
        )
        from_slots = state.connections.get(room_from_name) or Slots()
        if side != corridor.direction:
            _check_slot(room_from_name, from_slots, side)
        origin = get_room(state, room_from_name, "room_from_name")
        target = get_room(state, room_to_name, "room_to_name")
        new_end = step(origin.coords, side, corridor_length + 1)
        offset = (new_end[0] - target.coords[0], new_end[1] - target.coords[1])
        cells = corridor_cells(origin.coords, side, corridor_length)
        inner = inner_corridors(state, moving)
        check_move(state, moving, inner | {corridor.name}, offset, cells)
        shift(state, moving, offset)
        _reshape(state, corridor, side, corridor_length, cells)
        state.current_room = corridor.name
        return f"Updated corridor {corridor.name}: {corridor_length} cells going {side}."

    def _check_length(self, length: int) -> None:
        low, high = self.config.min_corridor_length, self.config.max_corridor_length
        require(
            low <= length <= high,
            f"corridor_length must be between {low} and {high}; got {length}.",
        )


def _check_slot(room: str, slots: Slots, side: str) -> None:
    require(
        not slots.get(side),
        f"{room} already has a corridor on its {side} side (to {slots.get(side)}); free "
        f"directions of {room}: {', '.join(slots.free()) or 'none'}.",
    )


def _check_distance(origin: Room, target: Room, side: str, length: int) -> None:
    """Require ``target`` exactly where a corridor of ``length`` going ``side`` ends."""
    end = step(origin.coords, side, length + 1)
    if end == target.coords:
        return
    dx, dy = target.coords[0] - origin.coords[0], target.coords[1] - origin.coords[1]
    hint = ""
    if (dx == 0) != (dy == 0):
        needed = {(0, -1): "north", (0, 1): "south", (1, 0): "east", (-1, 0): "west"}[
            ((dx > 0) - (dx < 0), (dy > 0) - (dy < 0))
        ]
        hint = f" (they are {abs(dx + dy)} cells apart going {needed}"
        hint += f": use direction {needed!r} and corridor_length {abs(dx + dy) - 1})"
    fail(
        f"{target.name} is at {target.coords}, but a {length}-cell corridor going {side} from "
        f"{origin.name} at {origin.coords} ends at {end}{hint}."
    )


def _stored_corridor(level: Level, room_from: str, room_to: str) -> Corridor:
    corridor = level.corridor(f"{room_from}-{room_to}")
    if corridor is not None:
        return corridor
    if level.corridor(f"{room_to}-{room_from}") is not None:
        fail(
            f"the corridor goes from {room_to!r} to {room_from!r}: pass room_from_name="
            f"{room_to!r} and room_to_name={room_from!r}."
        )
    fail(
        f"there is no corridor from {room_from!r} to {room_to!r}; corridors: "
        f"{corridor_names(level)}."
    )


def _reshape(
    level: Level, corridor: Corridor, side: str, length: int, cells: list[tuple[int, int]]
) -> None:
    """Give ``corridor`` its new direction, length and cells, and fix both rooms' slots."""
    old_side = corridor.direction
    from_slots = level.connections.setdefault(corridor.room_from, Slots())
    to_slots = level.connections.setdefault(corridor.room_to, Slots())
    setattr(from_slots, old_side, "")
    setattr(to_slots, OPPOSITE[old_side], "")
    setattr(from_slots, side, corridor.room_to)
    setattr(to_slots, OPPOSITE[side], corridor.room_from)
    corridor.direction = side  # type: ignore[assignment]
    corridor.length = length
    corridor.coords = cells
    corridor.cells = (corridor.cells + [Encounter() for _ in range(length)])[:length]
