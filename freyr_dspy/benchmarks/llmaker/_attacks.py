"""Attack functions: ``add_attack``, ``update_attack``, ``remove_attack``.

``update_attack`` works here; in dungeon-despair-domain 34f4ac5 a malformed X/O check made
every call fail. ``attack_type`` takes damage (base_dmg 0..5) or heal (base_dmg -5..0,
negative heals); the in-game types pass and move are not offered to the model. An unknown
enemy is a validation message rather than an uncaught ValueError.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._areas import get_encounter, get_enemy, place
from freyr_dspy.benchmarks.llmaker._config import (
    LevelConfig,
    fail,
    require,
    require_range,
    require_text,
)
from freyr_dspy.benchmarks.llmaker._models import Attack, Enemy, Level

__all__ = ["AttackFunctions"]

_POSITION_DOC = "4 characters, each X (yes) or O (no), e.g. XXOO"


class AttackFunctions:
    """The attack-editing tools; the level arrives through ``state``."""

    config: LevelConfig

    def add_attack(
        self,
        room_name: str,
        cell_index: int,
        enemy_name: str,
        name: str,
        description: str,
        attack_type: str,
        starting_positions: str,
        target_positions: str,
        base_dmg: float,
        accuracy: float,
        state: Level,
    ) -> str:
        """Give an enemy a new attack (at most {max_attacks} per enemy).

        Args:
            room_name: the room or corridor the enemy is in.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            enemy_name: name of the enemy.
            name: name of the attack.
            description: what the attack looks like.
            attack_type: damage or heal.
            starting_positions: positions the attacker can use it from: 4 characters, each X
                (yes) or O (no), e.g. XXOO.
            target_positions: positions it can hit: 4 characters, each X or O.
            base_dmg: damage 0 to {max_base_dmg} for damage; -{max_base_dmg} to 0 for heal.
            accuracy: hit chance, 0 to 1.
            state: the level to edit (supplied by the program, not the model).
        """
        attack = self._attack(
            room_name,
            enemy_name,
            name,
            description,
            attack_type,
            starting_positions,
            target_positions,
            base_dmg,
            accuracy,
        )
        enemy = _enemy(state, room_name, cell_index, enemy_name)
        cap = self.config.max_attacks
        require(
            len(enemy.attacks) < cap,
            f"{enemy_name} already has the maximum of {cap} attacks; update or remove one.",
        )
        enemy.attacks.append(attack)
        state.current_room = room_name
        return f"Added attack {name} to {enemy_name} in {place(room_name, state, cell_index)}."

    def update_attack(
        self,
        room_name: str,
        cell_index: int,
        enemy_name: str,
        reference_name: str,
        name: str,
        description: str,
        attack_type: str,
        starting_positions: str,
        target_positions: str,
        base_dmg: float,
        accuracy: float,
        state: Level,
    ) -> str:
        """Change an existing attack of an enemy (pass the current value of fields you keep).

        Args:
            room_name: the room or corridor the enemy is in.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            enemy_name: name of the enemy.
            reference_name: current name of the attack.
            name: new name of the attack.
            description: new description.
            attack_type: damage or heal.
            starting_positions: 4 characters, each X or O, e.g. XXOO.
            target_positions: 4 characters, each X or O.
            base_dmg: damage 0 to {max_base_dmg} for damage; -{max_base_dmg} to 0 for heal.
            accuracy: hit chance, 0 to 1.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(reference_name=reference_name)
        attack = self._attack(
            room_name,
            enemy_name,
            name,
            description,
            attack_type,
            starting_positions,
            target_positions,
            base_dmg,
            accuracy,
        )
        enemy = _enemy(state, room_name, cell_index, enemy_name)
        index = _attack_index(enemy, reference_name)
        enemy.attacks[index] = attack
        state.current_room = room_name
        return f"Updated attack {reference_name} of {enemy_name}."

    def remove_attack(
        self, room_name: str, cell_index: int, enemy_name: str, name: str, state: Level
    ) -> str:
        """Remove an attack from an enemy.

        Args:
            room_name: the room or corridor the enemy is in.
            cell_index: -1 for a room; for a corridor the cell, 1 to its length.
            enemy_name: name of the enemy.
            name: name of the attack to remove.
            state: the level to edit (supplied by the program, not the model).
        """
        require_text(room_name=room_name, enemy_name=enemy_name, name=name)
        enemy = _enemy(state, room_name, cell_index, enemy_name)
        del enemy.attacks[_attack_index(enemy, name)]
        state.current_room = room_name
        return f"Removed attack {name} from {enemy_name}."

    def _attack(
        self,
        room_name: str,
        enemy_name: str,
        name: str,
        description: str,
        attack_type: str,
        starting_positions: str,
        target_positions: str,
        base_dmg: float,
        accuracy: float,
    ) -> Attack:
        """Validate an attack's fields (in the original order) and build it."""
        require_text(room_name=room_name, name=name, description=description, enemy_name=enemy_name)
        kind = attack_type.strip().lower()
        require(
            kind in ("damage", "heal"), f"attack_type must be damage or heal; got {attack_type!r}."
        )
        top = self.config.max_base_dmg
        low, high = (0.0, top) if kind == "damage" else (-top, 0.0)
        require_range(f"base_dmg of a {kind} attack", base_dmg, low, high)
        require_range("accuracy", accuracy, 0.0, 1.0)
        for label, value in (
            ("starting_positions", starting_positions),
            ("target_positions", target_positions),
        ):
            require(
                len(value) == 4 and set(value) <= {"X", "O"},
                f"{label} must be {_POSITION_DOC}; got {value!r}.",
            )
        return Attack(
            name=name,
            description=description,
            type=kind,  # type: ignore[arg-type]
            starting_positions=starting_positions,
            target_positions=target_positions,
            base_dmg=base_dmg,
            accuracy=accuracy,
        )


def _enemy(level: Level, area: str, cell_index: int, enemy_name: str) -> Enemy:
    return get_enemy(get_encounter(level, area, cell_index), enemy_name, area)


def _attack_index(enemy: Enemy, name: str) -> int:
    for i, attack in enumerate(enemy.attacks):
        if attack.name == name:
            return i
    present = ", ".join(a.name for a in enemy.attacks) or "none"
    fail(f"{enemy.name} has no attack named {name!r}; its attacks: {present}.")
