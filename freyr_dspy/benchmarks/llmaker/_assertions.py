"""Declarative expected outcomes for LLMaker training rows.

A model names rooms and entities as it likes, so a training row states *what must be true*
of the edited level rather than an exact level: "room Ice Cave exists", "an enemy in the
current room with hp 300", "one more treasure in Library Hall", "the level is unchanged".
Each assertion is a *domain* check (structure: counts, existence, current area) or a
*design* check (values: an entity with the requested fields), mirroring the benchmark's
domain/design split; design checks count only when every domain check holds.

Matching: numbers must be equal; strings match case-insensitively as substrings, so
``{"name": "spider"}`` accepts "Giant Spider". ``area`` is a room or corridor name,
``"current"`` (the new level's current area) or omitted (the whole level).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.benchmarks.llmaker._models import ENTITY_LISTS, Direction, Encounter, Level, Room

__all__ = ["Assertion", "evaluate_assertions"]

CheckLevel = Literal["domain", "design"]
_STRICT = ConfigDict(extra="forbid")


class CountAssertion(BaseModel):
    """How many rooms, corridors or entities there are (absolute or as a change)."""

    model_config = _STRICT

    kind: Literal["count"] = "count"
    what: Literal["rooms", "corridors", "enemies", "traps", "treasures"]
    area: str | None = None
    delta: int | None = None
    equals: int | None = None
    check: CheckLevel = "domain"

    def holds(self, old: Level, new: Level) -> bool:
        """Compare the count in ``new`` (and its change from ``old``)."""
        after = _count(new, self.what, _area(self.area, new))
        if self.equals is not None and after != self.equals:
            return False
        if self.delta is not None:
            return after - _count(old, self.what, _area(self.area, new)) == self.delta
        return True


class RoomAssertion(BaseModel):
    """A room whose name contains ``name`` exists (or not).

    Optionally it has a description, and a corridor from ``connected_to`` (an exact room
    name) that leaves that room in ``direction``.
    """

    model_config = _STRICT

    kind: Literal["room"] = "room"
    name: str
    exists: bool = True
    description: str | None = None
    connected_to: str | None = None
    direction: Direction | None = None
    check: CheckLevel = "domain"

    def holds(self, old: Level, new: Level) -> bool:
        """Look for a matching room in ``new``."""
        rooms = [r for r in new.rooms if _matches(r.name, self.name)]
        if not self.exists:
            return not rooms
        return any(self._fits(new, room) for room in rooms)

    def _fits(self, level: Level, room: Room) -> bool:
        if self.description and not _matches(room.description, self.description):
            return False
        if self.connected_to is None:
            return True
        if level.corridor_between(room.name, self.connected_to) is None:
            return False
        slots = level.connections.get(self.connected_to)
        return self.direction is None or (
            slots is not None and slots.get(self.direction) == room.name
        )


class CorridorAssertion(BaseModel):
    """A corridor between two rooms exists (or not), optionally with a length/direction."""

    model_config = _STRICT

    kind: Literal["corridor"] = "corridor"
    between: tuple[str, str]
    exists: bool = True
    length: int | None = None
    check: CheckLevel = "domain"

    def holds(self, old: Level, new: Level) -> bool:
        """Look the corridor up in ``new`` (either order)."""
        corridor = new.corridor_between(*self.between)
        if corridor is None or not self.exists:
            return (corridor is None) != self.exists
        return self.length is None or corridor.length == self.length


class EntityAssertion(BaseModel):
    """An entity of a type with the given fields exists (or not) in an area."""

    model_config = _STRICT

    kind: Literal["entity"] = "entity"
    type: Literal["enemy", "trap", "treasure"]
    area: str | None = None
    cell: int | None = None
    match: dict[str, str | float] = Field(default_factory=dict)
    exists: bool = True
    check: CheckLevel = "design"

    def holds(self, old: Level, new: Level) -> bool:
        """Search the area's encounters in ``new`` for a matching entity."""
        found = any(
            all(_matches(getattr(entity, key, None), value) for key, value in self.match.items())
            for encounter in _encounters(new, _area(self.area, new), self.cell)
            for entity in encounter.entities(self.type)
        )
        return found == self.exists


class AttackAssertion(BaseModel):
    """An enemy (name contains ``enemy``) in an area has (or lacks) a matching attack."""

    model_config = _STRICT

    kind: Literal["attack"] = "attack"
    enemy: str
    area: str | None = None
    match: dict[str, str | float] = Field(default_factory=dict)
    exists: bool = True
    check: CheckLevel = "design"

    def holds(self, old: Level, new: Level) -> bool:
        """Search the attacks of the matching enemies in ``new``."""
        found = any(
            all(_matches(getattr(attack, key, None), value) for key, value in self.match.items())
            for encounter in _encounters(new, _area(self.area, new))
            for enemy in encounter.enemies
            if _matches(enemy.name, self.enemy)
            for attack in enemy.attacks
        )
        return found == self.exists


class CurrentAssertion(BaseModel):
    """The current area after the edit (by name, or whether it is a corridor)."""

    model_config = _STRICT

    kind: Literal["current"] = "current"
    area: str | None = None
    is_corridor: bool | None = None
    check: CheckLevel = "domain"

    def holds(self, old: Level, new: Level) -> bool:
        """Inspect ``new.current_room``."""
        if self.area is not None and new.current_room != self.area:
            return False
        return self.is_corridor is None or new.current_is_corridor() == self.is_corridor


class UnchangedAssertion(BaseModel):
    """Nothing changed at all (the request should be refused or is impossible)."""

    model_config = _STRICT

    kind: Literal["unchanged"] = "unchanged"
    check: CheckLevel = "domain"

    def holds(self, old: Level, new: Level) -> bool:
        """Compare the whole levels."""
        return old == new


Assertion = Annotated[
    CountAssertion
    | RoomAssertion
    | CorridorAssertion
    | EntityAssertion
    | AttackAssertion
    | CurrentAssertion
    | UnchangedAssertion,
    Field(discriminator="kind"),
]


def evaluate_assertions(
    assertions: Sequence[Any], old: Level, new: Level
) -> tuple[bool, bool, list[int]]:
    """Return (domain, design, indexes of the failed assertions); design needs domain."""
    failed = [i for i, a in enumerate(assertions) if not _safe(a, old, new)]
    domain = not any(assertions[i].check == "domain" for i in failed)
    return domain, domain and not failed, failed


def _safe(assertion: Any, old: Level, new: Level) -> bool:
    try:
        return bool(assertion.holds(old, new))
    except (LookupError, ValueError, TypeError):
        return False


def _area(area: str | None, new: Level) -> str | None:
    return new.current_room if area == "current" else area


def _encounters(level: Level, area: str | None, cell: int | None = None) -> list[Encounter]:
    return [
        e
        for name, index, e in level.all_encounters()
        if (area is None or name == area) and (cell is None or index == cell)
    ]


def _count(level: Level, what: str, area: str | None) -> int:
    if what == "rooms":
        return len(level.rooms)
    if what == "corridors":
        return len(level.corridors)
    kind = next(k for k, v in ENTITY_LISTS.items() if v == what)
    return sum(len(e.entities(kind)) for e in _encounters(level, area))


def _matches(actual: Any, expected: str | float) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and expected.lower() in actual.lower()
    return isinstance(actual, int | float) and float(actual) == float(expected)
