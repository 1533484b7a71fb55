"""Two text renderings of a level for prompts: the original one and a richer one.

``render_original`` reproduces FREYR's ``str(level)`` byte for byte (spec §1.5): rooms with
their encounters, corridors cell by cell, and the current room. It hides the geometry
(coordinates, corridor directions, free direction slots) and enemy attacks, so a model has
to guess a free direction for ``create_room`` and pays a domain error when it guesses wrong.

``render_rich`` shows what the original hides - coordinates, each room's exits and free
directions, corridor directions and cell coordinates, attacks - so the effect of the
rendering on success and tokens can be measured (``state_view="rich"``).
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._models import (
    DIRECTIONS,
    Corridor,
    Encounter,
    Enemy,
    Level,
    Room,
)

__all__ = ["render_original", "render_rich"]

_TYPES = (("enemy", "enemies"), ("trap", "traps"), ("treasure", "treasures"))


# --------------------------------------------------------------------------- original (§1.5)


def render_original(level: Level) -> str:
    """Render the level exactly as FREYR's prompts showed it."""
    rooms = "\n".join(
        f"{r.name}: {r.description};{_encounter_original(r.encounter)}" for r in level.rooms
    )
    corridors = "\n".join(_corridor_original(c) for c in level.corridors)
    return f"Rooms:\n{rooms}\nCorridors:\n{corridors}\nCurrent room: {level.current_room}"


def _corridor_original(corridor: Corridor) -> str:
    head = (
        f"{corridor.name}: from {corridor.room_from} to {corridor.room_to}, "
        f"{corridor.length} cells long;"
    )
    cells = "".join(
        f"\nCell {i} {_encounter_original(cell)}" for i, cell in enumerate(corridor.cells, start=1)
    )
    return head + cells


def _encounter_original(encounter: Encounter) -> str:
    enemies = "; ".join(
        f"Enemy {e.name}: {e.description} Species={e.species} HP={e.hp} DODGE={e.dodge} "
        f"PROT={e.prot} SPD={e.spd}"
        for e in encounter.enemies
    )
    traps = "; ".join(f"Trap {t.name}: {t.description} Effect={t.effect}" for t in encounter.traps)
    treasures = "; ".join(
        f"Treasure {t.name}: {t.description} Loot={t.loot}" for t in encounter.treasures
    )
    return f"\n\tenemy: {enemies}\n\ttrap: {traps}\n\ttreasure: {treasures}"


# --------------------------------------------------------------------------- rich


def render_rich(level: Level) -> str:
    """Render the level with its geometry: coordinates, exits, free directions, cells."""
    if not level.rooms:
        return (
            'The level is empty: no rooms yet. The first room needs room_from "" and direction "".'
        )
    lines = [f"Current area: {_current(level)}", "Rooms (first to last; (x, y), north is y-1):"]
    for room in level.rooms:
        lines += _room_rich(level, room)
    lines.append("Corridors:" if level.corridors else "Corridors: none")
    for corridor in level.corridors:
        lines += _corridor_rich(corridor)
    return "\n".join(lines)


def _current(level: Level) -> str:
    if not level.current_room:
        return "none"
    kind = "corridor" if level.current_is_corridor() else "room"
    return f"{level.current_room} ({kind})"


def _room_rich(level: Level, room: Room) -> list[str]:
    slots = level.connections.get(room.name)
    exits = [f"{d} to {slots.get(d)}" for d in DIRECTIONS if slots and slots.get(d)]
    free = slots.free() if slots else list(DIRECTIONS)
    return [
        f"- {room.name} at ({room.coords[0]}, {room.coords[1]}): {room.description}",
        f"  exits: {', '.join(exits) or 'none'}; free directions: {', '.join(free) or 'none'}",
        f"  contains: {_encounter_rich(room.encounter)}",
    ]


def _corridor_rich(corridor: Corridor) -> list[str]:
    lines = [
        f"- {corridor.name}: from {corridor.room_from} going {corridor.direction} to "
        f"{corridor.room_to}, {corridor.length} cells"
    ]
    for i, (cell, xy) in enumerate(zip(corridor.cells, corridor.coords, strict=False), start=1):
        lines.append(f"  cell {i} at ({xy[0]}, {xy[1]}): {_encounter_rich(cell)}")
    return lines


def _encounter_rich(encounter: Encounter) -> str:
    if encounter.is_empty():
        return "nothing"
    parts = []
    for entity_type, attribute in _TYPES:
        entities = getattr(encounter, attribute)
        if entities:
            described = "; ".join(_entity_rich(entity_type, e) for e in entities)
            parts.append(f"{attribute}: {described}")
    return " | ".join(parts)


def _entity_rich(entity_type: str, entity: object) -> str:
    if isinstance(entity, Enemy):
        attacks = (
            ", ".join(
                f"{a.name} ({a.type} {a.base_dmg}, accuracy {a.accuracy})" for a in entity.attacks
            )
            or "none"
        )
        return (
            f"{entity.name} ({entity.description}; species {entity.species}, hp {entity.hp}, "
            f"dodge {entity.dodge}, prot {entity.prot}, spd {entity.spd}; attacks: {attacks})"
        )
    detail = getattr(entity, "effect", None) or getattr(entity, "loot", "")
    label = "effect" if entity_type == "trap" else "loot"
    return f"{getattr(entity, 'name', '')} ({getattr(entity, 'description', '')}; {label} {detail})"
