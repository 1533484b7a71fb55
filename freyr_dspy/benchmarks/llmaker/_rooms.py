"""Room functions: ``create_room``, ``remove_room``, ``update_room``.

Deviations from dungeon-despair-domain 34f4ac5, each because the original is a bug:

* ``create_room`` refuses a ``room_from`` that is a corridor, instead of refusing whenever the
  *current* area is a corridor (the author's own levels need the corrected rule at T2.6).
  "First room" means "the level has no rooms" rather than "no current room", and the
  direction is also validated for non-first rooms case-insensitively.
* ``remove_room`` clears the back-references on both sides of every removed corridor (the
  original forgot the ``room_from`` side and left dangling neighbours).
* ``update_room`` keeps the room (and its corridors) in place in the level order, and also
  renames a current corridor; the original moved them to the end, changing "the first
  room", and could leave a stale corridor name as the current area.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._areas import get_room, parse_direction, room_names
from freyr_dspy.benchmarks.llmaker._config import LevelConfig, require, require_text
from freyr_dspy.benchmarks.llmaker._geometry import check_free, corridor_cells, step
from freyr_dspy.benchmarks.llmaker._models import (
    DIRECTIONS,
    OPPOSITE,
    Corridor,
    Encounter,
    Level,
    Room,
    Slots,
)

__all__ = ["RoomFunctions"]


class RoomFunctions:
    """The room-editing tools; the level arrives through ``state``."""

    config: LevelConfig

    def create_room(
        self, name: str, description: str, room_from: str, direction: str, state: Level
    ) -> str:
        """Create a new room, joined to an existing room by a new corridor.

        Args:
            name: unique name of the new room, e.g. "Swamp Room".
            description: what the room looks like.
            room_from: the existing room the new room connects to; "" only for the first
                room of an empty level.
            direction: side of room_from where the new room goes (north, south, east or
                west; that side must be free); "" for the first room.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(name=name, description=description)
        require(
            state.room(name) is None and state.corridor(name) is None,
            f"a room named {name!r} already exists; choose another name.",
        )
        if not state.rooms:
            require(
                not room_from.strip(),
                'the level has no rooms yet, so the first room needs room_from "".',
            )
            state.rooms.append(Room(name=name, description=description))
            state.connections[name] = Slots()
            state.current_room = name
            return f"Added {name} to the level."
        require_text(room_from=room_from, direction=direction)
        require(
            state.corridor(room_from) is None,
            f"room_from {room_from!r} is a corridor; a new room must connect to a room: "
            f"{room_names(state)}.",
        )
        origin = get_room(state, room_from, "room_from")
        side = parse_direction(direction)
        slots = state.connections.get(room_from) or Slots()
        require(
            not slots.get(side),
            f"there already exists a room {side} of {room_from} ({slots.get(side)}); free "
            f"directions of {room_from}: {', '.join(slots.free()) or 'none'}.",
        )
        length = self.config.min_corridor_length
        position = step(origin.coords, side, length + 1)
        cells = corridor_cells(origin.coords, side, length)
        check_free(state, position, cells)
        state.rooms.append(Room(name=name, description=description, coords=position))
        setattr(slots, side, name)
        state.connections[room_from] = slots
        state.connections[name] = Slots(**{OPPOSITE[side]: room_from})
        state.corridors.append(
            Corridor(
                name=f"{room_from}-{name}",
                room_from=room_from,
                room_to=name,
                direction=side,  # type: ignore[arg-type]
                length=length,
                coords=cells,
                cells=[Encounter() for _ in cells],
            )
        )
        state.current_room = name
        return f"Added {name} to the level, {side} of {room_from}."

    def remove_room(self, name: str, state: Level) -> str:
        """Remove a room, its corridors and everything in them.

        Args:
            name: name of the room to remove.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(name=name)
        room = get_room(state, name)
        state.rooms.remove(room)
        state.connections.pop(name, None)
        state.corridors = [c for c in state.corridors if not c.joins(name)]
        for slots in state.connections.values():
            for side in DIRECTIONS:
                if slots.get(side) == name:
                    setattr(slots, side, "")
        state.current_room = state.rooms[0].name if state.rooms else ""
        return f"Removed {name} from the level."

    def update_room(
        self, room_reference_name: str, name: str, description: str, state: Level
    ) -> str:
        """Rename a room and/or change its description.

        Args:
            room_reference_name: current name of the room to change.
            name: new name of the room (repeat the current name to keep it).
            description: new description of the room.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_reference_name=room_reference_name, name=name, description=description)
        room = get_room(state, room_reference_name, "room_reference_name")
        require(
            name == room_reference_name or state.room(name) is None,
            f"name {name!r} is already used by another room; choose another name.",
        )
        room.name, room.description = name, description
        if name != room_reference_name:
            _rename_references(state, room_reference_name, name)
        return f"Updated {room_reference_name} properties."


def _rename_references(level: Level, old: str, new: str) -> None:
    """Point connections, corridors and the current area at a renamed room."""
    level.connections = {(new if k == old else k): v for k, v in level.connections.items()}
    for slots in level.connections.values():
        for side in DIRECTIONS:
            if slots.get(side) == old:
                setattr(slots, side, new)
    for corridor in level.corridors:
        if corridor.joins(old):
            was_current = level.current_room == corridor.name
            corridor.room_from = new if corridor.room_from == old else corridor.room_from
            corridor.room_to = new if corridor.room_to == old else corridor.room_to
            corridor.name = f"{corridor.room_from}-{corridor.room_to}"
            if was_current:
                level.current_room = corridor.name
    if level.current_room == old:
        level.current_room = new
