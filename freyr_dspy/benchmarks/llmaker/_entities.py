"""Entity functions: add, update and remove enemies, traps and treasures.

Validation follows dungeon-despair-domain 34f4ac5 in order and meaning, with these fixes:

* ``update_enemy_properties`` keeps the enemy's attacks (the original silently dropped them).
* ``update_trap_properties`` with an unknown corridor and ``remove_entity``/attack functions
  with an unknown enemy give a validation message instead of an uncaught KeyError/ValueError.
* ``entity_type`` is read case-insensitively.

Names are unique per encounter and entity type only; the same name may recur elsewhere.
Every successful edit makes the edited room or corridor the current area.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._areas import check_cell, get_corridor, get_encounter, place
from freyr_dspy.benchmarks.llmaker._config import (
    LevelConfig,
    fail,
    require,
    require_range,
    require_text,
)
from freyr_dspy.benchmarks.llmaker._models import (
    ENTITY_LISTS,
    Encounter,
    Enemy,
    Level,
    Trap,
    Treasure,
)

__all__ = ["EntityFunctions"]


class EntityFunctions:
    """The entity-editing tools; the level arrives through ``state``."""

    config: LevelConfig

    def add_enemy(
        self,
        room_name: str,
        name: str,
        description: str,
        species: str,
        hp: float,
        dodge: float,
        prot: float,
        spd: float,
        cell_index: int,
        state: Level,
    ) -> str:
        """Add an enemy to a room or to a corridor cell.

        Args:
            room_name: the room or corridor to put the enemy in.
            name: name of the enemy, unique among the enemies there.
            description: what the enemy looks like.
            species: the enemy's species.
            hp: health points, {min_hp} to {max_hp}.
            dodge: dodge chance, {min_dodge} to {max_dodge}.
            prot: protection, {min_prot} to {max_prot}.
            spd: speed, {min_spd} to {max_spd}.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_name=room_name, name=name, description=description)
        self._check_stats(hp, dodge, prot, spd)
        encounter = get_encounter(state, room_name, cell_index)
        self._check_new(encounter, "enemy", name, room_name)
        encounter.enemies.append(
            Enemy(
                name=name,
                description=description,
                species=species,
                hp=hp,
                dodge=dodge,
                prot=prot,
                spd=spd,
            )
        )
        state.current_room = room_name
        return f"Added {name} to {place(room_name, state, cell_index)}."

    def add_treasure(
        self, room_name: str, name: str, description: str, loot: str, cell_index: int, state: Level
    ) -> str:
        """Add a treasure to a room or to a corridor cell.

        Args:
            room_name: the room or corridor to put the treasure in.
            name: name of the treasure, unique among the treasures there.
            description: what the treasure looks like.
            loot: what the treasure contains.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_name=room_name, name=name, description=description, loot=loot)
        encounter = get_encounter(state, room_name, cell_index)
        self._check_new(encounter, "treasure", name, room_name)
        encounter.treasures.append(Treasure(name=name, description=description, loot=loot))
        state.current_room = room_name
        return f"Added {name} to {place(room_name, state, cell_index)}."

    def add_trap(
        self,
        corridor_name: str,
        name: str,
        description: str,
        effect: str,
        cell_index: int,
        state: Level,
    ) -> str:
        """Add a trap to a corridor cell (traps can only go in corridors, never in rooms).

        Args:
            corridor_name: the corridor to put the trap in.
            name: name of the trap, unique among the traps in that cell.
            description: what the trap looks like.
            effect: what the trap does.
            cell_index: the corridor cell, 1 to the corridor's length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(corridor_name=corridor_name, name=name, description=description, effect=effect)
        if state.room(corridor_name):
            fail(f"traps can only be added to corridors, and {corridor_name!r} is a room.")
        corridor = get_corridor(state, corridor_name)
        check_cell(corridor, cell_index)
        encounter = corridor.cells[cell_index - 1]
        self._check_new(encounter, "trap", name, corridor_name)
        encounter.traps.append(Trap(name=name, description=description, effect=effect))
        state.current_room = corridor_name
        return f"Added {name} to {corridor_name} in cell {cell_index}."

    def update_enemy_properties(
        self,
        room_name: str,
        reference_name: str,
        name: str,
        description: str,
        species: str,
        hp: float,
        dodge: float,
        prot: float,
        spd: float,
        cell_index: int,
        state: Level,
    ) -> str:
        """Change an existing enemy (pass the current value of every field you keep).

        Args:
            room_name: the room or corridor the enemy is in.
            reference_name: current name of the enemy.
            name: new name (repeat the current one to keep it).
            description: new description.
            species: new species.
            hp: new health points, {min_hp} to {max_hp}.
            dodge: new dodge chance, {min_dodge} to {max_dodge}.
            prot: new protection, {min_prot} to {max_prot}.
            spd: new speed, {min_spd} to {max_spd}.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(
            room_name=room_name,
            reference_name=reference_name,
            name=name,
            description=description,
            species=species,
        )
        self._check_stats(hp, dodge, prot, spd)
        encounter = get_encounter(state, room_name, cell_index)
        index = _index(encounter, "enemy", reference_name, room_name)
        _check_rename(encounter, "enemy", reference_name, name, room_name)
        old = encounter.enemies[index]
        encounter.enemies[index] = Enemy(
            name=name,
            description=description,
            species=species,
            hp=hp,
            dodge=dodge,
            prot=prot,
            spd=spd,
            attacks=old.attacks,
        )
        state.current_room = room_name
        return f"Updated {reference_name} properties in {place(room_name, state, cell_index)}."

    def update_treasure_properties(
        self,
        room_name: str,
        reference_name: str,
        name: str,
        description: str,
        loot: str,
        cell_index: int,
        state: Level,
    ) -> str:
        """Change an existing treasure (pass the current value of every field you keep).

        Args:
            room_name: the room or corridor the treasure is in.
            reference_name: current name of the treasure.
            name: new name (repeat the current one to keep it).
            description: new description.
            loot: new loot.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(
            room_name=room_name,
            reference_name=reference_name,
            name=name,
            description=description,
            loot=loot,
        )
        encounter = get_encounter(state, room_name, cell_index)
        index = _index(encounter, "treasure", reference_name, room_name)
        _check_rename(encounter, "treasure", reference_name, name, room_name)
        encounter.treasures[index] = Treasure(name=name, description=description, loot=loot)
        state.current_room = room_name
        return f"Updated {reference_name} properties in {place(room_name, state, cell_index)}."

    def update_trap_properties(
        self,
        corridor_name: str,
        reference_name: str,
        name: str,
        description: str,
        effect: str,
        cell_index: int,
        state: Level,
    ) -> str:
        """Change an existing trap in a corridor cell.

        Args:
            corridor_name: the corridor the trap is in.
            reference_name: current name of the trap.
            name: new name (repeat the current one to keep it).
            description: new description.
            effect: new effect.
            cell_index: the corridor cell, 1 to the corridor's length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(
            corridor_name=corridor_name,
            reference_name=reference_name,
            name=name,
            description=description,
            effect=effect,
        )
        corridor = get_corridor(state, corridor_name)
        check_cell(corridor, cell_index)
        encounter = corridor.cells[cell_index - 1]
        index = _index(encounter, "trap", reference_name, corridor_name)
        _check_rename(encounter, "trap", reference_name, name, corridor_name)
        encounter.traps[index] = Trap(name=name, description=description, effect=effect)
        state.current_room = corridor_name
        return f"Updated {reference_name} properties in {corridor_name} in cell {cell_index}."

    def remove_entity(
        self, room_name: str, entity_name: str, entity_type: str, cell_index: int, state: Level
    ) -> str:
        """Remove an enemy, trap or treasure from a room or a corridor cell.

        Args:
            room_name: the room or corridor the entity is in.
            entity_name: name of the entity to remove.
            entity_type: enemy, trap or treasure.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_name=room_name, entity_name=entity_name, entity_type=entity_type)
        kind = entity_type.strip().lower()
        require(
            kind in ENTITY_LISTS,
            f"entity_type must be one of enemy, trap, treasure; got {entity_type!r}.",
        )
        encounter = get_encounter(state, room_name, cell_index)
        index = _index(encounter, kind, entity_name, room_name)
        del encounter.entities(kind)[index]
        state.current_room = room_name
        return f"Removed {entity_name} from {place(room_name, state, cell_index)}."

    def _check_stats(self, hp: float, dodge: float, prot: float, spd: float) -> None:
        c = self.config
        require_range("hp", hp, c.min_hp, c.max_hp)
        require_range("dodge", dodge, c.min_dodge, c.max_dodge)
        require_range("prot", prot, c.min_prot, c.max_prot)
        require_range("spd", spd, c.min_spd, c.max_spd)

    def _check_new(self, encounter: Encounter, kind: str, name: str, area: str) -> None:
        entities = encounter.entities(kind)
        require(
            all(e.name != name for e in entities),
            f"there is already {_a(kind)} named {name!r} in {area}; choose another name.",
        )
        cap = self.config.capacity(kind)
        require(
            len(entities) < cap,
            f"{area} already holds the maximum of {cap} {ENTITY_LISTS[kind] if cap > 1 else kind}"
            f"; use another room or corridor cell.",
        )


def _index(encounter: Encounter, kind: str, name: str, area: str) -> int:
    """Position of the entity called ``name``; a validation error names those present."""
    entities = encounter.entities(kind)
    for i, entity in enumerate(entities):
        if entity.name == name:
            return i
    present = ", ".join(e.name for e in entities) or "none"
    fail(f"there is no {kind} named {name!r} in {area}; {ENTITY_LISTS[kind]} there: {present}.")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _check_rename(encounter: Encounter, kind: str, old: str, new: str, area: str) -> None:
    require(
        new == old or all(e.name != new for e in encounter.entities(kind)),
        f"there is already {_a(kind)} named {new!r} in {area}; choose another name.",
    )
