"""Every validation message of the 16 level-editing functions, and that a rejected call
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from freyr_dspy.benchmarks.llmaker._models import Corridor, Encounter, Level, Room, Slots
from tests.support.llmaker_helpers import STATS, TOOLBOX, apply, enemy, room

CORRIDOR = "West Room-East Room"


def base() -> Level:
    """West Room (Goblin with attack Stab, Chest) -east-> East Room (4 orcs); Pit in cell 1."""
    return apply(
        Level(),
        room("West Room"),
        room("East Room", "West Room", "east"),
        enemy("West Room", "Goblin"),
        (
            "add_treasure",
            {
                "room_name": "West Room",
                "name": "Chest",
                "description": "A chest",
                "loot": "gold",
                "cell_index": -1,
            },
        ),
        (
            "add_trap",
            {
                "corridor_name": CORRIDOR,
                "name": "Pit",
                "description": "A pit",
                "effect": "falls",
                "cell_index": 1,
            },
        ),
        ("add_attack", _attack()),
        *[enemy("East Room", f"Orc {i}") for i in range(1, 5)],
    )


def _attack(**changes: Any) -> dict[str, Any]:
    return {
        "room_name": "West Room",
        "cell_index": -1,
        "enemy_name": "Goblin",
        "name": "Stab",
        "description": "A quick stab",
        "attack_type": "damage",
        "starting_positions": "XXOO",
        "target_positions": "OOXX",
        "base_dmg": 2,
        "accuracy": 0.5,
        **changes,
    }


def _enemy(**changes: Any) -> dict[str, Any]:
    return {
        "room_name": "West Room",
        "name": "Rat",
        "description": "A rat",
        "hp": 3,
        "cell_index": -1,
        **STATS,
        **changes,
    }


def _update_enemy(**changes: Any) -> dict[str, Any]:
    return {
        "room_name": "West Room",
        "reference_name": "Goblin",
        "name": "Goblin",
        "description": "A goblin",
        "hp": 5,
        "cell_index": -1,
        **STATS,
        **changes,
    }


def _room(**changes: Any) -> dict[str, Any]:
    return {
        "name": "New Room",
        "description": "A new room",
        "room_from": "West Room",
        "direction": "north",
        **changes,
    }


def _corridor(**changes: Any) -> dict[str, Any]:
    return {
        "room_from_name": "West Room",
        "room_to_name": "East Room",
        "corridor_length": 2,
        "direction": "east",
        **changes,
    }


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("create_room", _room(name=""), "name should be provided"),
    ("create_room", _room(description=" "), "description should be provided"),
    ("create_room", _room(name="East Room"), "a room named 'East Room' already exists"),
    ("create_room", _room(room_from=""), "room_from should be provided"),
    ("create_room", _room(direction=""), "direction should be provided"),
    ("create_room", _room(room_from=CORRIDOR), "is a corridor; a new room must connect to a room"),
    ("create_room", _room(room_from="Attic"), "room_from 'Attic' is not a room of the level"),
    ("create_room", _room(direction="up"), "direction must be one of north, south, east, west"),
    (
        "create_room",
        _room(direction="east"),
        "there already exists a room east of West Room (East Room); free directions of West Room: "
        "north, south, west",
    ),
    ("remove_room", {"name": ""}, "name should be provided"),
    (
        "remove_room",
        {"name": "Attic"},
        "name 'Attic' is not a room of the level; rooms: West Room, East Room",
    ),
    ("remove_room", {"name": CORRIDOR}, "(that is a corridor)"),
    (
        "update_room",
        {"room_reference_name": "Attic", "name": "A", "description": "d"},
        "room_reference_name 'Attic' is not a room",
    ),
    (
        "update_room",
        {"room_reference_name": "West Room", "name": "", "description": "d"},
        "name should be provided",
    ),
    (
        "update_room",
        {"room_reference_name": "West Room", "name": "East Room", "description": "d"},
        "name 'East Room' is already used by another room",
    ),
    ("add_corridor", _corridor(room_to_name=""), "room_to_name should be provided"),
    ("add_corridor", _corridor(room_to_name="West Room"), "a corridor must join two different"),
    ("add_corridor", _corridor(room_to_name="Attic"), "room_to_name 'Attic' is not a room"),
    ("add_corridor", _corridor(), f"already joined by corridor '{CORRIDOR}'"),
    (
        "remove_corridor",
        {"room_from_name": "West Room", "room_to_name": "Attic"},
        "there is no corridor between 'West Room' and 'Attic'",
    ),
    ("update_corridor", _corridor(corridor_length=5), "corridor_length must be between 2 and 4"),
    (
        "update_corridor",
        _corridor(room_from_name="East Room", room_to_name="West Room"),
        "the corridor goes from 'West Room' to 'East Room': pass room_from_name='West Room'",
    ),
    ("update_corridor", _corridor(room_to_name="Attic"), "there is no corridor from"),
    ("update_corridor", _corridor(direction="sideways"), "direction must be one of"),
    ("add_enemy", _enemy(room_name=""), "room_name should be provided"),
    ("add_enemy", _enemy(name=""), "name should be provided"),
    ("add_enemy", _enemy(description=""), "description should be provided"),
    ("add_enemy", _enemy(hp=0), "hp must be between 1 and 1000; got 0"),
    ("add_enemy", _enemy(hp=1000.5), "hp must be between 1 and 1000; got 1000.5"),
    ("add_enemy", _enemy(dodge=0), "dodge must be between 0.1 and 1; got 0"),
    ("add_enemy", _enemy(prot=1.5), "prot must be between 0 and 1; got 1.5"),
    ("add_enemy", _enemy(spd=0.05), "spd must be between 0.1 and 1; got 0.05"),
    (
        "add_enemy",
        _enemy(room_name="Attic"),
        "room_name 'Attic' is not a room or corridor of the "
        f"level; rooms: West Room, East Room; corridors: {CORRIDOR}",
    ),
    (
        "add_enemy",
        _enemy(room_name=CORRIDOR, cell_index=3),
        f"cell_index must be between 1 and 2 for corridor '{CORRIDOR}'; got 3",
    ),
    ("add_enemy", _enemy(name="Goblin"), "there is already an enemy named 'Goblin' in West Room"),
    (
        "add_enemy",
        _enemy(room_name="East Room"),
        "East Room already holds the maximum of 4 enemies",
    ),
    (
        "add_treasure",
        {
            "room_name": "West Room",
            "name": "Bag",
            "description": "A bag",
            "loot": "",
            "cell_index": -1,
        },
        "loot should be provided",
    ),
    (
        "add_treasure",
        {
            "room_name": "West Room",
            "name": "Chest",
            "description": "A bag",
            "loot": "coins",
            "cell_index": -1,
        },
        "already a treasure named 'Chest'",
    ),
    (
        "add_treasure",
        {
            "room_name": "West Room",
            "name": "Bag",
            "description": "A bag",
            "loot": "coins",
            "cell_index": -1,
        },
        "West Room already holds the maximum of 1 treasure",
    ),
    (
        "add_trap",
        {
            "corridor_name": "West Room",
            "name": "Net",
            "description": "A net",
            "effect": "traps",
            "cell_index": 1,
        },
        "traps can only be added to corridors, and 'West Room' is a room",
    ),
    (
        "add_trap",
        {
            "corridor_name": "Hall-Way",
            "name": "Net",
            "description": "A net",
            "effect": "traps",
            "cell_index": 1,
        },
        "corridor_name 'Hall-Way' is not a corridor of the level",
    ),
    (
        "add_trap",
        {
            "corridor_name": CORRIDOR,
            "name": "Net",
            "description": "A net",
            "effect": "traps",
            "cell_index": 0,
        },
        "cell_index must be between 1 and 2",
    ),
    (
        "add_trap",
        {
            "corridor_name": CORRIDOR,
            "name": "Net",
            "description": "A net",
            "effect": "",
            "cell_index": 1,
        },
        "effect should be provided",
    ),
    (
        "add_trap",
        {
            "corridor_name": CORRIDOR,
            "name": "Net",
            "description": "A net",
            "effect": "traps",
            "cell_index": 1,
        },
        "already holds the maximum of 1 trap",
    ),
    (
        "update_enemy_properties",
        _update_enemy(reference_name="Troll"),
        "there is no enemy named 'Troll' in West Room; enemies there: Goblin",
    ),
    ("update_enemy_properties", _update_enemy(species=""), "species should be provided"),
    ("update_enemy_properties", _update_enemy(hp=5000), "hp must be between 1 and 1000"),
    (
        "update_enemy_properties",
        _update_enemy(room_name="East Room", reference_name="Orc 1", name="Orc 2"),
        "there is already an enemy named 'Orc 2' in East Room",
    ),
    (
        "update_treasure_properties",
        {
            "room_name": "West Room",
            "reference_name": "Box",
            "name": "Box",
            "description": "d",
            "loot": "l",
            "cell_index": -1,
        },
        "there is no treasure named 'Box' in West Room; treasures there: Chest",
    ),
    (
        "update_trap_properties",
        {
            "corridor_name": "West Room",
            "reference_name": "Pit",
            "name": "Pit",
            "description": "d",
            "effect": "e",
            "cell_index": 1,
        },
        "it looks like a room, but this needs a corridor",
    ),
    (
        "update_trap_properties",
        {
            "corridor_name": CORRIDOR,
            "reference_name": "Pit",
            "name": "Pit",
            "description": "d",
            "effect": "e",
            "cell_index": 2,
        },
        "there is no trap named 'Pit' in West Room-East Room; traps there: none",
    ),
    (
        "remove_entity",
        {
            "room_name": "West Room",
            "entity_name": "Goblin",
            "entity_type": "monster",
            "cell_index": -1,
        },
        "entity_type must be one of enemy, trap, treasure; got 'monster'",
    ),
    (
        "remove_entity",
        {
            "room_name": "West Room",
            "entity_name": "Troll",
            "entity_type": "enemy",
            "cell_index": -1,
        },
        "there is no enemy named 'Troll' in West Room",
    ),
    ("add_attack", _attack(attack_type="poke"), "attack_type must be damage or heal; got 'poke'"),
    ("add_attack", _attack(base_dmg=6), "base_dmg of a damage attack must be between 0 and 5"),
    (
        "add_attack",
        _attack(attack_type="heal", base_dmg=2),
        "base_dmg of a heal attack must be between -5 and 0; got 2",
    ),
    ("add_attack", _attack(accuracy=1.2), "accuracy must be between 0 and 1; got 1.2"),
    (
        "add_attack",
        _attack(starting_positions="XXO"),
        "starting_positions must be 4 characters, each X (yes) or O (no)",
    ),
    ("add_attack", _attack(target_positions="XXAO"), "target_positions must be 4 characters"),
    (
        "add_attack",
        _attack(enemy_name="Troll"),
        "there is no enemy 'Troll' in West Room; enemies there: Goblin",
    ),
    ("add_attack", _attack(name=""), "name should be provided"),
    (
        "update_attack",
        {**_attack(), "reference_name": "Kick"},
        "Goblin has no attack named 'Kick'; its attacks: Stab",
    ),
    (
        "remove_attack",
        {"room_name": "West Room", "cell_index": -1, "enemy_name": "Troll", "name": "Stab"},
        "there is no enemy 'Troll' in West Room",
    ),
    (
        "remove_attack",
        {"room_name": "West Room", "cell_index": -1, "enemy_name": "Goblin", "name": "Kick"},
        "Goblin has no attack named 'Kick'",
    ),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_validation_message(tool: str, arguments: dict[str, Any], message: str) -> None:
    level = base()
    execution = TOOLBOX.execute(tool, arguments, level)
    assert not execution.outcome.ok
    assert execution.outcome.message.startswith(f"{tool} failed: Domain validation error: ")
    assert message in execution.outcome.message
    assert execution.state is level  # the rejected call kept the old level
    assert level == base()  # ... and did not touch it


def test_every_tool_has_a_validation_case() -> None:
    assert {c[0] for c in CASES} == set(TOOLBOX.names)


def test_first_room_rules() -> None:
    rejected = TOOLBOX.execute("create_room", _room(), Level())
    assert 'the first room needs room_from ""' in rejected.outcome.message


def test_attack_capacity() -> None:
    level = apply(base(), *[("add_attack", _attack(name=f"Hit {i}")) for i in range(3)])
    rejected = TOOLBOX.execute("add_attack", _attack(name="One too many"), level)
    assert "Goblin already has the maximum of 4 attacks" in rejected.outcome.message


def _manual_level() -> Level:
    """Room A at (0,0) and a stray corridor cell at (0,-1), for the clash messages."""
    return Level(
        rooms=[
            Room(name="A", description="a"),
            Room(name="B", description="b", coords=(0, -6)),
            Room(name="C", description="c", coords=(9, 9)),
        ],
        corridors=[
            Corridor(
                name="C-D",
                room_from="C",
                room_to="D",
                coords=[(0, -1)],
                cells=[Encounter()],
                length=1,
            )
        ],
        connections={"A": Slots(), "B": Slots(), "C": Slots()},
        current_room="A",
    )


def test_placement_clashes() -> None:
    level = _manual_level()
    crossing = TOOLBOX.execute("create_room", _room(room_from="A"), level)
    assert "the corridor would cross corridor C-D at (0, -1)" in crossing.outcome.message
    occupied = TOOLBOX.execute("create_room", _room(room_from="B", direction="south"), level)
    assert "the new room's position (0, -3) is already occupied" not in occupied.outcome.message
    level.rooms.append(Room(name="E", description="e", coords=(0, -3)))
    level.connections["E"] = Slots()
    occupied = TOOLBOX.execute("create_room", _room(room_from="B", direction="south"), level)
    assert "the new room's position (0, -3) is already occupied by room E" in (
        occupied.outcome.message
    )


def test_missing_and_mistyped_arguments_are_reported_by_the_toolbox() -> None:
    missing = TOOLBOX.execute("remove_room", {}, base())
    assert "missing required argument 'name'" in missing.outcome.message
    mistyped = TOOLBOX.execute("add_enemy", _enemy(hp="lots"), base())
    assert "argument 'hp' expects number" in mistyped.outcome.message
