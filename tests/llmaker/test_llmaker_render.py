"""Both level renderings: FREYR's original text (byte-exact) and the rich one."""

from __future__ import annotations

from pathlib import Path

from llmaker_helpers import STATS, apply, room

from freyr_dspy.llmaker.levels import read_level
from freyr_dspy.llmaker.models import Level
from freyr_dspy.llmaker.render import render_original, render_rich

# The example of spec §1.5 (FREYR's str(level) of test case 1 before step 6).
SPEC_EXAMPLE = (
    "Rooms:\n"
    "Swamp Room: A room set in a swamp;\n"
    "\tenemy: Enemy Bog Monster: A monster covered in algae Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5; Enemy Banshee: A screaming banshee Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5\n"
    "\ttrap: \n"
    "\ttreasure: \n"
    "Medieval Room: A room set in the middle ages;\n"
    "\tenemy: Enemy Undead Knight: A skeleton wearing an armor Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5\n"
    "\ttrap: \n"
    "\ttreasure: Treasure Ornate Chest: A chest made out of wood Loot=5x gold pieces\n"
    "Corridors:\n"
    "Swamp Room-Medieval Room: from Swamp Room to Medieval Room, 2 cells long;\n"
    "Cell 1 \n"
    "\tenemy: \n"
    "\ttrap: Trap Spike Pit: A pit with spikes Effect=Causes bleeding\n"
    "\ttreasure: \n"
    "Cell 2 \n"
    "\tenemy: \n"
    "\ttrap: Trap Sand Pit: A pit with sand Effect=Causes bleeding\n"
    "\ttreasure: \n"
    "Current room: Swamp Room-Medieval Room"
)
CORRIDOR = "Swamp Room-Medieval Room"


def _spec_level() -> Level:
    def add(area: str, name: str, description: str) -> tuple[str, dict[str, object]]:
        return "add_enemy", {
            "room_name": area,
            "name": name,
            "description": description,
            "hp": 5,
            "cell_index": -1,
            **STATS,
        }

    def trap(name: str, description: str, cell: int) -> tuple[str, dict[str, object]]:
        return "add_trap", {
            "corridor_name": CORRIDOR,
            "name": name,
            "description": description,
            "effect": "Causes bleeding",
            "cell_index": cell,
        }

    return apply(
        Level(),
        (
            "create_room",
            {
                "name": "Swamp Room",
                "description": "A room set in a swamp",
                "room_from": "",
                "direction": "",
            },
        ),
        add("Swamp Room", "Bog Monster", "A monster covered in algae"),
        add("Swamp Room", "Banshee", "A screaming banshee"),
        (
            "create_room",
            {
                "name": "Medieval Room",
                "description": "A room set in the middle ages",
                "room_from": "Swamp Room",
                "direction": "east",
            },
        ),
        add("Medieval Room", "Undead Knight", "A skeleton wearing an armor"),
        (
            "add_treasure",
            {
                "room_name": "Medieval Room",
                "name": "Ornate Chest",
                "description": "A chest made out of wood",
                "loot": "5x gold pieces",
                "cell_index": -1,
            },
        ),
        trap("Spike Pit", "A pit with spikes", 1),
        trap("Sand Pit", "A pit with sand", 2),
    )


def test_original_rendering_matches_the_spec_example_byte_for_byte() -> None:
    assert render_original(_spec_level()) == SPEC_EXAMPLE


def test_original_rendering_of_the_benchmark_level(llmaker_data: Path) -> None:
    assert render_original(read_level(llmaker_data / "levels/T1/step6.json")) == SPEC_EXAMPLE


def test_original_rendering_of_an_empty_level() -> None:
    assert render_original(Level()) == "Rooms:\n\nCorridors:\n\nCurrent room: "


def test_rich_rendering_shows_what_the_original_hides() -> None:
    level = apply(
        _spec_level(),
        (
            "add_attack",
            {
                "room_name": "Swamp Room",
                "cell_index": -1,
                "enemy_name": "Banshee",
                "name": "Wail",
                "description": "A piercing wail",
                "attack_type": "damage",
                "starting_positions": "XXOO",
                "target_positions": "OXXO",
                "base_dmg": 2,
                "accuracy": 0.8,
            },
        ),
    )
    text = render_rich(level)
    assert "Current area: Swamp Room (room)" in text
    assert "- Swamp Room at (0, 0): A room set in a swamp" in text
    assert "exits: east to Medieval Room; free directions: north, south, west" in text
    assert "exits: west to Swamp Room; free directions: north, south, east" in text
    assert "from Swamp Room going east to Medieval Room, 2 cells" in text
    assert "cell 1 at (1, 0): traps: Spike Pit" in text
    assert "cell 2 at (2, 0): traps: Sand Pit" in text
    assert "attacks: Wail (damage 2.0, accuracy 0.8)" in text
    for hidden in ("(0, 0)", "free directions", "going east", "Wail"):
        assert hidden not in render_original(level)


def test_rich_rendering_of_an_empty_level_explains_the_first_room() -> None:
    assert 'room_from ""' in render_rich(Level())


def test_rich_rendering_marks_a_corridor_as_current() -> None:
    assert "Current area: Swamp Room-Medieval Room (corridor)" in render_rich(_spec_level())


def test_rich_rendering_lists_a_full_room_and_an_empty_one() -> None:
    level = apply(Level(), room("Hall"), room("Cellar", "Hall", "south"))
    text = render_rich(level)
    assert "- Cellar at (0, 3): The Cellar" in text
    assert "contains: nothing" in text
