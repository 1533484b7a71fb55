"""Both level renderings: FREYR's original text (byte-exact) and the rich one."""

from __future__ import annotations

from pathlib import Path

from freyr_dspy.benchmarks.llmaker._levels import read_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.benchmarks.llmaker._render import render_original, render_rich
from tests.support.llmaker_helpers import STATS, apply, room

# The layout of spec §1.5 (FREYR's str(level)), with our own names instead of the benchmark's.
SPEC_EXAMPLE = (
    "Rooms:\n"
    "Marsh Hall: A hall over a marsh;\n"
    "\tenemy: Enemy Mud Golem: A golem of wet clay Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5; Enemy Wailing Wraith: A wraith that wails Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5\n"
    "\ttrap: \n"
    "\ttreasure: \n"
    "Keep Hall: A hall in an old keep;\n"
    "\tenemy: Enemy Rusty Sentinel: A sentinel in rusted plate Species=Unknown HP=5.0 DODGE=0.5 "
    "PROT=0.5 SPD=0.5\n"
    "\ttrap: \n"
    "\ttreasure: Treasure Carved Coffer: A coffer of carved oak Loot=3x silver coins\n"
    "Corridors:\n"
    "Marsh Hall-Keep Hall: from Marsh Hall to Keep Hall, 2 cells long;\n"
    "Cell 1 \n"
    "\tenemy: \n"
    "\ttrap: Trap Nail Trap: A floor of nails Effect=Causes bleeding\n"
    "\ttreasure: \n"
    "Cell 2 \n"
    "\tenemy: \n"
    "\ttrap: Trap Quick Mire: A patch of mire Effect=Causes bleeding\n"
    "\ttreasure: \n"
    "Current room: Marsh Hall-Keep Hall"
)
CORRIDOR = "Marsh Hall-Keep Hall"


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
                "name": "Marsh Hall",
                "description": "A hall over a marsh",
                "room_from": "",
                "direction": "",
            },
        ),
        add("Marsh Hall", "Mud Golem", "A golem of wet clay"),
        add("Marsh Hall", "Wailing Wraith", "A wraith that wails"),
        (
            "create_room",
            {
                "name": "Keep Hall",
                "description": "A hall in an old keep",
                "room_from": "Marsh Hall",
                "direction": "east",
            },
        ),
        add("Keep Hall", "Rusty Sentinel", "A sentinel in rusted plate"),
        (
            "add_treasure",
            {
                "room_name": "Keep Hall",
                "name": "Carved Coffer",
                "description": "A coffer of carved oak",
                "loot": "3x silver coins",
                "cell_index": -1,
            },
        ),
        trap("Nail Trap", "A floor of nails", 1),
        trap("Quick Mire", "A patch of mire", 2),
    )


def test_original_rendering_matches_the_spec_example_byte_for_byte() -> None:
    assert render_original(_spec_level()) == SPEC_EXAMPLE


def _texts(level: Level) -> list[str]:
    """Every name/description/loot text of a level, in rendering order."""
    texts: list[str] = []
    encounters = [r.encounter for r in level.rooms] + [c for k in level.corridors for c in k.cells]
    for area in level.rooms:
        texts += [area.name, area.description]
    for encounter in encounters:
        for entity in [*encounter.enemies, *encounter.traps, *encounter.treasures]:
            texts += [entity.name, entity.description, getattr(entity, "loot", "")]
    return [t for t in texts if t]


def test_original_rendering_of_the_benchmark_level(llmaker_data: Path) -> None:
    real = read_level(llmaker_data / "levels/T1/step6.json")
    text = render_original(real)
    # Same level, other names: map the benchmark's texts onto ours, longest first.
    pairs = sorted(zip(_texts(real), _texts(_spec_level()), strict=True), key=lambda p: -len(p[0]))
    for theirs, ours in pairs:
        text = text.replace(theirs, ours)
    assert text == SPEC_EXAMPLE


def test_original_rendering_of_an_empty_level() -> None:
    assert render_original(Level()) == "Rooms:\n\nCorridors:\n\nCurrent room: "


def test_rich_rendering_shows_what_the_original_hides() -> None:
    level = apply(
        _spec_level(),
        (
            "add_attack",
            {
                "room_name": "Marsh Hall",
                "cell_index": -1,
                "enemy_name": "Wailing Wraith",
                "name": "Shriek",
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
    assert "Current area: Marsh Hall (room)" in text
    assert "- Marsh Hall at (0, 0): A hall over a marsh" in text
    assert "exits: east to Keep Hall; free directions: north, south, west" in text
    assert "exits: west to Marsh Hall; free directions: north, south, east" in text
    assert "from Marsh Hall going east to Keep Hall, 2 cells" in text
    assert "cell 1 at (1, 0): traps: Nail Trap" in text
    assert "cell 2 at (2, 0): traps: Quick Mire" in text
    assert "attacks: Shriek (damage 2.0, accuracy 0.8)" in text
    for hidden in ("(0, 0)", "free directions", "going east", "Shriek"):
        assert hidden not in render_original(level)


def test_rich_rendering_of_an_empty_level_explains_the_first_room() -> None:
    assert 'room_from ""' in render_rich(Level())


def test_rich_rendering_marks_a_corridor_as_current() -> None:
    assert "Current area: Marsh Hall-Keep Hall (corridor)" in render_rich(_spec_level())


def test_rich_rendering_lists_a_full_room_and_an_empty_one() -> None:
    level = apply(Level(), room("Hall"), room("Cellar", "Hall", "south"))
    text = render_rich(level)
    assert "- Cellar at (0, 3): The Cellar" in text
    assert "contains: nothing" in text
