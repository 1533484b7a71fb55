"""What the level-editing functions do when they succeed: geometry, references, current area."""

from __future__ import annotations

from freyr_dspy.benchmarks.llmaker._config import PUBLIC_CONFIG, LevelConfig
from freyr_dspy.benchmarks.llmaker._functions import LIBRARIES, TOOL_NAMES, make_toolbox
from freyr_dspy.benchmarks.llmaker._models import Level, Slots
from tests.support.llmaker_helpers import STATS, TOOLBOX, apply, enemy, room


def test_toolbox_has_the_16_functions_in_four_libraries() -> None:
    assert TOOLBOX.names == list(TOOL_NAMES) and len(TOOL_NAMES) == 16
    assert TOOLBOX.libraries == {k: list(v) for k, v in LIBRARIES.items()}
    schema = TOOLBOX.get("add_enemy").json_schema()
    assert "state" not in schema["properties"]
    assert schema["properties"]["hp"] == {
        "type": "number",
        "description": "health points, 1 to 1000.",
    }
    assert schema["required"] == list(schema["properties"])


def test_descriptions_quote_the_configured_limits() -> None:
    public = make_toolbox(PUBLIC_CONFIG)
    hp = next(p for p in public.get("add_enemy").parameters if p.name == "hp")
    assert hp.description == "health points, 1 to 20."
    assert "{" not in "".join(t.description + str(t.parameters) for t in public)


def test_max_hp_is_configurable() -> None:
    level = apply(Level(), room("Hall"))
    arguments = {
        "room_name": "Hall",
        "name": "Ogre",
        "description": "An ogre",
        "hp": 50,
        "cell_index": -1,
        **STATS,
    }
    assert TOOLBOX.execute("add_enemy", arguments, level).outcome.ok
    public = make_toolbox(PUBLIC_CONFIG).execute("add_enemy", arguments, level)
    assert "hp must be between 1 and 20; got 50" in public.outcome.message
    roomy = make_toolbox(LevelConfig(max_hp=5000)).execute(
        "add_enemy", {**arguments, "hp": 4000}, level
    )
    assert roomy.outcome.ok


def test_create_room_places_room_and_corridor_on_the_grid(two_rooms: Level) -> None:
    level = apply(two_rooms, room("North Room", "East Room", "North"))  # case-insensitive
    north = level.room("North Room")
    assert north is not None and north.coords == (3, -3)
    corridor = level.corridor("East Room-North Room")
    assert corridor is not None
    assert (corridor.direction, corridor.length, corridor.coords) == (
        "north",
        2,
        [(3, -1), (3, -2)],
    )
    assert len(corridor.cells) == 2
    assert level.connections["East Room"] == Slots(north="North Room", west="West Room")
    assert level.connections["North Room"] == Slots(south="East Room")
    assert level.current_room == "North Room"


def test_create_room_from_a_room_while_a_corridor_is_current(two_rooms: Level) -> None:
    """The corrected rule (T2.6): only room_from must not be a corridor."""
    level = apply(
        two_rooms,
        (
            "add_treasure",
            {
                "room_name": "West Room-East Room",
                "name": "Bag",
                "description": "A bag",
                "loot": "coins",
                "cell_index": 2,
            },
        ),
    )
    assert level.current_is_corridor()
    level = apply(level, room("South Room", "East Room", "south"))
    assert level.room("South Room") is not None


def test_remove_room_clears_both_sides(two_rooms: Level) -> None:
    level = apply(
        two_rooms, room("North Room", "West Room", "north"), ("remove_room", {"name": "West Room"})
    )
    assert [r.name for r in level.rooms] == ["East Room", "North Room"]
    assert level.corridors == []
    assert "West Room" not in level.connections
    assert level.connections["East Room"] == Slots()
    assert level.connections["North Room"] == Slots()
    assert level.current_room == "East Room"


def test_update_room_renames_every_reference_in_place(two_rooms: Level) -> None:
    level = apply(
        two_rooms,
        (
            "add_trap",
            {
                "corridor_name": "West Room-East Room",
                "name": "Pit",
                "description": "A pit",
                "effect": "falls",
                "cell_index": 1,
            },
        ),
        (
            "update_room",
            {"room_reference_name": "West Room", "name": "Gate", "description": "A gate"},
        ),
    )
    assert [r.name for r in level.rooms] == ["Gate", "East Room"]  # order kept
    assert [c.name for c in level.corridors] == ["Gate-East Room"]
    assert level.corridors[0].room_from == "Gate"
    assert list(level.connections) == ["Gate", "East Room"]
    assert level.connections["East Room"].west == "Gate"
    assert level.current_room == "Gate-East Room"  # the current corridor was renamed too


def test_entity_edits_move_the_current_area(two_rooms: Level) -> None:
    level = apply(two_rooms, enemy("West Room", "Rat"))
    assert level.current_room == "West Room"
    level = apply(level, enemy("West Room-East Room", "Bat", cell=2))
    assert level.current_room == "West Room-East Room"
    assert level.corridors[0].cells[1].enemies[0].name == "Bat"


def test_update_enemy_keeps_its_attacks(two_rooms: Level) -> None:
    level = apply(
        two_rooms,
        enemy("West Room", "Rat"),
        (
            "add_attack",
            {
                "room_name": "West Room",
                "cell_index": -1,
                "enemy_name": "Rat",
                "name": "Bite",
                "description": "A bite",
                "attack_type": "damage",
                "starting_positions": "XOOO",
                "target_positions": "XXOO",
                "base_dmg": 1,
                "accuracy": 0.9,
            },
        ),
        (
            "update_enemy_properties",
            {
                "room_name": "West Room",
                "reference_name": "Rat",
                "name": "Giant Rat",
                "description": "A big rat",
                "hp": 9,
                "cell_index": -1,
                **STATS,
            },
        ),
    )
    rat = level.rooms[0].encounter.enemies[0]
    assert (rat.name, rat.hp, [a.name for a in rat.attacks]) == ("Giant Rat", 9.0, ["Bite"])


def test_attacks_can_be_updated_and_removed(two_rooms: Level) -> None:
    attack = {
        "room_name": "West Room",
        "cell_index": -1,
        "enemy_name": "Rat",
        "name": "Bite",
        "description": "A bite",
        "attack_type": "damage",
        "starting_positions": "XOOO",
        "target_positions": "XXOO",
        "base_dmg": 1,
        "accuracy": 0.9,
    }
    level = apply(
        two_rooms,
        enemy("West Room", "Rat"),
        ("add_attack", attack),
        (
            "update_attack",
            {
                **attack,
                "reference_name": "Bite",
                "name": "Mend",
                "attack_type": "heal",
                "base_dmg": -2,
            },
        ),
    )
    (mend,) = level.rooms[0].encounter.enemies[0].attacks
    assert (mend.name, mend.type, mend.base_dmg) == ("Mend", "heal", -2.0)
    level = apply(
        level,
        (
            "remove_attack",
            {"room_name": "West Room", "cell_index": -1, "enemy_name": "Rat", "name": "Mend"},
        ),
    )
    assert level.rooms[0].encounter.enemies[0].attacks == []


def test_remove_entity_by_type(two_rooms: Level) -> None:
    level = apply(
        two_rooms,
        enemy("West Room", "Rat"),
        (
            "add_treasure",
            {
                "room_name": "West Room",
                "name": "Rat",
                "description": "A rat statue",
                "loot": "gold",
                "cell_index": -1,
            },
        ),
        (
            "remove_entity",
            {
                "room_name": "West Room",
                "entity_name": "Rat",
                "entity_type": "Treasure",
                "cell_index": -1,
            },
        ),
    )
    encounter = level.rooms[0].encounter
    assert ([e.name for e in encounter.enemies], encounter.treasures) == (["Rat"], [])


def test_add_and_remove_corridor() -> None:
    level = apply(
        Level(), room("A"), room("B", "A", "east"), room("C", "B", "south"), room("D", "A", "south")
    )
    assert level.room("D") is not None and level.room("D").coords == (0, 3)  # type: ignore[union-attr]
    near_miss = TOOLBOX.execute(
        "add_corridor",
        {"room_from_name": "D", "room_to_name": "C", "corridor_length": 3, "direction": "east"},
        level,
    )
    assert "use direction 'east' and corridor_length 2" in near_miss.outcome.message
    level = apply(
        level,
        (
            "add_corridor",
            {"room_from_name": "D", "room_to_name": "C", "corridor_length": 2, "direction": "east"},
        ),
    )
    corridor = level.corridor("D-C")
    assert corridor is not None and corridor.coords == [(1, 3), (2, 3)]
    assert level.connections["C"].west == "D" and level.current_room == "D-C"
    taken = TOOLBOX.execute(
        "add_corridor",
        {"room_from_name": "A", "room_to_name": "C", "corridor_length": 2, "direction": "east"},
        level,
    )
    assert "A already has a corridor on its east side (to B)" in taken.outcome.message
    level = apply(level, ("remove_corridor", {"room_from_name": "C", "room_to_name": "D"}))
    assert level.corridor("D-C") is None
    assert level.connections["C"].west == "" and level.connections["D"].east == ""
    assert level.current_room == "D"


def test_update_corridor_moves_the_rooms_beyond_it() -> None:
    level = apply(
        Level(),
        room("A"),
        room("B", "A", "east"),
        room("C", "B", "east"),
        enemy("A-B", "Bat", cell=2),
    )
    level = apply(
        level,
        (
            "update_corridor",
            {"room_from_name": "A", "room_to_name": "B", "corridor_length": 4, "direction": "east"},
        ),
    )
    assert [r.coords for r in level.rooms] == [(0, 0), (5, 0), (8, 0)]
    ab, bc = level.corridors
    assert ab.coords == [(1, 0), (2, 0), (3, 0), (4, 0)] and ab.length == 4
    assert ab.cells[1].enemies[0].name == "Bat" and len(ab.cells) == 4
    assert bc.coords == [(6, 0), (7, 0)]
    level = apply(
        level,
        (
            "update_corridor",
            {
                "room_from_name": "A",
                "room_to_name": "B",
                "corridor_length": 2,
                "direction": "south",
            },
        ),
    )
    assert [r.coords for r in level.rooms] == [(0, 0), (0, 3), (3, 3)]
    assert level.connections["A"] == Slots(south="B") and level.connections["B"].north == "A"
    assert level.corridors[0].direction == "south" and level.current_room == "A-B"


def test_update_corridor_refuses_loops_and_clashes() -> None:
    loop = apply(
        Level(),
        room("A"),
        room("B", "A", "east"),
        room("C", "B", "south"),
        room("D", "A", "south"),
        (
            "add_corridor",
            {"room_from_name": "D", "room_to_name": "C", "corridor_length": 2, "direction": "east"},
        ),
    )
    refused = TOOLBOX.execute(
        "update_corridor",
        {"room_from_name": "A", "room_to_name": "B", "corridor_length": 3, "direction": "east"},
        loop,
    )
    assert "corridor 'A-B' is part of a loop" in refused.outcome.message
    fan = apply(Level(), room("A"), room("B", "A", "east"), room("C", "A", "south"))
    clash = TOOLBOX.execute(
        "update_corridor",
        {"room_from_name": "A", "room_to_name": "B", "corridor_length": 2, "direction": "south"},
        fan,
    )
    assert "A already has a corridor on its south side (to C)" in clash.outcome.message
    fan = apply(fan, room("D", "C", "east"))  # D at (3, 3)
    folded = TOOLBOX.execute(
        "update_corridor",
        {"room_from_name": "A", "room_to_name": "C", "corridor_length": 2, "direction": "west"},
        fan,
    )
    assert "the corridor would cross corridor C-D at (-1, 0)" in folded.outcome.message
    moved = apply(
        fan,
        (
            "update_corridor",
            {
                "room_from_name": "A",
                "room_to_name": "C",
                "corridor_length": 3,
                "direction": "south",
            },
        ),
    )
    assert [r.coords for r in moved.rooms] == [(0, 0), (3, 0), (0, 4), (3, 4)]
    moved = apply(moved, room("F", "B", "south"))  # F at (3, 3), just above D
    crash = TOOLBOX.execute(
        "update_corridor",
        {"room_from_name": "A", "room_to_name": "C", "corridor_length": 2, "direction": "south"},
        moved,
    )
    assert "moving room D to (3, 3) would clash with room F" in crash.outcome.message
