"""The Dungeon Despair level model (dungeon-despair-domain 34f4ac5), as pydantic models.

The models mirror the JSON layout of the benchmark's level files field for field and in the
same order, so ``Level.model_dump(mode="json")`` *is* the file layout: rooms and corridors
are lists in insertion order ("the first room" is ``rooms[0]``), an encounter keeps its
enemies, traps and treasures in separate lists, and a corridor keeps one encounter per cell
(cell ``i`` is ``cells[i - 1]``). Unknown keys are refused, so a typo in a level file is an
error, not silently dropped data. Sprites are not modelled: they are empty in every file.
"""

from __future__ import annotations

from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DIRECTIONS",
    "ENTITY_LISTS",
    "OFFSETS",
    "OPPOSITE",
    "Attack",
    "Corridor",
    "Direction",
    "Encounter",
    "Enemy",
    "Level",
    "Room",
    "Slots",
    "Trap",
    "Treasure",
]

Direction = Literal["north", "south", "east", "west"]
EntityType = Literal["enemy", "trap", "treasure"]

#: Directions in the order the level files list connection slots.
DIRECTIONS: tuple[Direction, ...] = ("north", "south", "east", "west")
#: Grid step of one cell in each direction (north decreases y).
OFFSETS: dict[str, tuple[int, int]] = {
    "north": (0, -1),
    "south": (0, 1),
    "east": (1, 0),
    "west": (-1, 0),
}
OPPOSITE: dict[str, Direction] = {
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
}
#: Encounter list names per entity type.
ENTITY_LISTS: dict[str, str] = {"enemy": "enemies", "trap": "traps", "treasure": "treasures"}

_STRICT = ConfigDict(extra="forbid")


class Attack(BaseModel):
    """One attack of an enemy (no enemy in the benchmark files has any)."""

    model_config = _STRICT

    name: str
    description: str
    type: Literal["damage", "heal", "pass", "move"]
    starting_positions: str
    target_positions: str
    base_dmg: float
    accuracy: float
    active: bool = True


class Entity(BaseModel):
    """What enemies, traps and treasures share: a name and a description."""

    model_config = _STRICT

    name: str
    description: str


class Enemy(Entity):
    """An enemy with its combat statistics."""

    species: str
    hp: float
    dodge: float
    prot: float
    spd: float
    attacks: list[Attack] = Field(default_factory=list)


class Trap(Entity):
    """A trap; the domain allows traps only in corridor cells."""

    effect: str


class Treasure(Entity):
    """A treasure with its loot."""

    loot: str


class Encounter(BaseModel):
    """What one room or one corridor cell holds."""

    model_config = _STRICT

    enemies: list[Enemy] = Field(default_factory=list)
    traps: list[Trap] = Field(default_factory=list)
    treasures: list[Treasure] = Field(default_factory=list)

    def entities(self, entity_type: str) -> list[Entity]:
        """Return the (mutable) list of one entity type."""
        # NOTE: the list itself, so callers can append or delete in place.
        return cast(list[Entity], getattr(self, ENTITY_LISTS[entity_type]))

    def is_empty(self) -> bool:
        """Tell whether the encounter holds nothing."""
        return not (self.enemies or self.traps or self.treasures)


class Room(BaseModel):
    """A room on the grid."""

    model_config = _STRICT

    name: str
    description: str
    coords: tuple[int, int] = (0, 0)
    encounter: Encounter = Field(default_factory=Encounter)


class Corridor(BaseModel):
    """A corridor joining two rooms; ``direction`` goes from ``room_from`` to ``room_to``."""

    model_config = _STRICT

    name: str
    room_from: str
    room_to: str
    direction: Direction = "north"
    length: int = 2
    coords: list[tuple[int, int]] = Field(default_factory=list)
    cells: list[Encounter] = Field(default_factory=list)

    def joins(self, room: str) -> bool:
        """Tell whether the corridor touches ``room``."""
        return room in (self.room_from, self.room_to)


class Slots(BaseModel):
    """A room's neighbour in each direction ("" when the slot is free)."""

    model_config = _STRICT

    north: str = ""
    south: str = ""
    east: str = ""
    west: str = ""

    def get(self, direction: str) -> str:
        """Return the neighbour in ``direction``."""
        value: str = getattr(self, direction)
        return value

    def free(self) -> list[str]:
        """The directions with no neighbour, in file order."""
        return [d for d in DIRECTIONS if not self.get(d)]


class Level(BaseModel):
    """A whole dungeon level, plus the area the last edit touched (``current_room``)."""

    model_config = _STRICT

    rooms: list[Room] = Field(default_factory=list)
    corridors: list[Corridor] = Field(default_factory=list)
    connections: dict[str, Slots] = Field(default_factory=dict)
    current_room: str = ""

    def room(self, name: str) -> Room | None:
        """Return the room called ``name``, if any."""
        return next((r for r in self.rooms if r.name == name), None)

    def corridor(self, name: str) -> Corridor | None:
        """Return the corridor called ``name``, if any."""
        return next((c for c in self.corridors if c.name == name), None)

    def corridor_between(self, a: str, b: str) -> Corridor | None:
        """Return the corridor joining rooms ``a`` and ``b`` in either order, if any."""
        return next((c for c in self.corridors if {c.room_from, c.room_to} == {a, b}), None)

    def current_is_corridor(self) -> bool:
        """Tell whether the last edited area is a corridor."""
        return self.corridor(self.current_room) is not None

    def all_encounters(self) -> list[tuple[str, int, Encounter]]:
        """Every encounter as (area name, cell index or -1 for rooms, encounter)."""
        found = [(r.name, -1, r.encounter) for r in self.rooms]
        for corridor in self.corridors:
            found += [(corridor.name, i + 1, cell) for i, cell in enumerate(corridor.cells)]
        return found

    def occupied(self) -> dict[tuple[int, int], str]:
        """Grid cell -> what occupies it (a room name or ``corridor <name>``)."""
        cells = {tuple(r.coords): r.name for r in self.rooms}
        for corridor in self.corridors:
            cells.update({tuple(xy): f"corridor {corridor.name}" for xy in corridor.coords})
        return cells  # type: ignore[return-value]
