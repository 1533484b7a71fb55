"""The 50 step checks against the reference edits, and typical wrong edits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.benchmarks.llmaker._steps import STEP_CHECKS, evaluate_step, get_step_check
from freyr_dspy.benchmarks.llmaker._testset import TestStep, load_test_steps
from tests.support.llmaker_helpers import STATS, apply, enemy, room

# Hand-made correct edits for the last step of each test case (no reference level follows).
LAST_STEP: dict[str, Callable[[Level], Level]] = {
    "T1": lambda level: level,  # "Add a trap in the first room": refusing is correct
    "T2": lambda level: apply(level, enemy("Cavern Room", "Giant Spider", hp=80)),
    "T3": lambda level: apply(level, enemy("Arena Room", "Minotaur", hp=100)),
    "T4": lambda level: apply(level, room("Room 5", "Room 4", "north")),
    "T5": lambda level: apply(
        level,
        (
            "update_enemy_properties",
            {
                "room_name": "Hell Room",
                "reference_name": "Capybara Monster",
                "name": "Capybara Monster",
                "description": "A punk capybara with pink spiky hair",
                "hp": 1000,
                "cell_index": -1,
                **STATS,
            },
        ),
    ),
}


@pytest.fixture
def steps(data_dir: Path) -> dict[str, TestStep]:
    if not (data_dir / "llmaker" / "test_cases.json").is_file():
        pytest.skip("no LLMaker test set")
    return {s.id: s for s in load_test_steps(data_dir)}


def reference_after(steps: dict[str, TestStep], step: TestStep) -> Level:
    following = steps.get(f"{step.case}.{step.step + 1}")
    return following.start if following else LAST_STEP[step.case](step.start)


def test_fifty_steps_each_with_a_check(steps: dict[str, TestStep]) -> None:
    assert len(steps) == 50 and set(STEP_CHECKS) == {(s.case, s.step) for s in steps.values()}


def test_reference_edits_pass_all_fifty_steps(steps: dict[str, TestStep]) -> None:
    failed = [
        step.id
        for step in steps.values()
        if evaluate_step(
            get_step_check(step.case, step.step), step.start, reference_after(steps, step)
        )
        != (True, True)
    ]
    assert failed == []


def test_doing_nothing_passes_only_the_refusal_steps(steps: dict[str, TestStep]) -> None:
    passed = sorted(
        step.id
        for step in steps.values()
        if evaluate_step(get_step_check(step.case, step.step), step.start, step.start)[1]
    )
    assert passed == ["T1.7", "T4.5"]


def _check(
    steps: dict[str, TestStep], step_id: str, *calls: tuple[str, dict[str, object]]
) -> tuple[bool, bool]:
    step = steps[step_id]
    return evaluate_step(
        get_step_check(step.case, step.step), step.start, apply(step.start, *calls)
    )


def test_wrong_room_fails(steps: dict[str, TestStep]) -> None:
    # T1.6: halving the first enemy of the Medieval Room instead of the swamp's
    halved_elsewhere = (
        "update_enemy_properties",
        {
            "room_name": "Medieval Room",
            "reference_name": "Undead Knight",
            "name": "Undead Knight",
            "description": "A skeleton wearing an armor",
            "hp": 2.5,
            "cell_index": -1,
            **STATS,
        },
    )
    assert _check(steps, "T1.6", halved_elsewhere) == (True, False)
    # T2.4: the chest goes into a room instead of the end of the corridor
    chest = {"name": "Chest", "description": "A chest", "loot": "gold"}
    in_room = ("add_treasure", {"room_name": "Ancient Room", "cell_index": -1, **chest})
    assert _check(steps, "T2.4", in_room) == (False, False)
    first_cell = (
        "add_treasure",
        {"room_name": "Starting Room-Ancient Room", "cell_index": 1, **chest},
    )
    assert _check(steps, "T2.4", first_cell) == (False, False)
    # T5.8: removing the wrong map piece
    wrong_piece = (
        "remove_entity",
        {
            "room_name": "Amsterdam Room",
            "entity_name": "Simple Chest",
            "entity_type": "treasure",
            "cell_index": -1,
        },
    )
    assert _check(steps, "T5.8", wrong_piece) == (False, False)


def test_extra_entities_fail(steps: dict[str, TestStep]) -> None:
    assert _check(
        steps,
        "T2.2",
        enemy("Starting Room", "Shadow", hp=50),
        enemy("Starting Room", "Shadow 2", hp=50),
    ) == (False, False)
    assert _check(
        steps,
        "T5.3",
        enemy("Paris Room", "Zombie 1"),
        enemy("Paris Room", "Zombie 2"),
        enemy("Paris Room", "Zombie 3"),
    ) == (False, False)
    trap = (
        "add_trap",
        {
            "corridor_name": steps["T1.7"].start.corridors[0].name,
            "name": "Net",
            "description": "A net",
            "effect": "traps",
            "cell_index": 1,
        },
    )
    assert _check(steps, "T1.7") == (True, True)
    blocked = steps["T1.7"].start.model_copy(deep=True)
    blocked.corridors[0].cells[0].traps.clear()
    check = get_step_check("T1", 7)
    assert evaluate_step(check, blocked, apply(blocked, trap)) == (False, False)


def test_wrong_values_fail_the_design_check(steps: dict[str, TestStep]) -> None:
    assert _check(steps, "T2.2", enemy("Starting Room", "Shadow", hp=5)) == (True, False)
    assert _check(steps, "T3.6", enemy("Underground Room", "Bat", hp=20)) == (True, False)
    assert _check(
        steps,
        "T3.6",
        enemy("Underground Room", "Bat 1", hp=20),
        enemy("Underground Room", "Bat 2", hp=20),
    ) == (True, True)


def test_fixed_steps_accept_the_right_edit_and_reject_others(steps: dict[str, TestStep]) -> None:
    chest = (
        "add_treasure",
        {
            "room_name": "Gravity Room",
            "name": "Chest",
            "description": "A chest",
            "loot": "gold",
            "cell_index": -1,
        },
    )
    assert _check(steps, "T4.2", chest) == (True, True)  # hard-coded False in validators.py
    two = [enemy("Omega Room", f"Enemy {i}") for i in (1, 2)]
    assert _check(steps, "T4.6", *two) == (False, False)  # room not filled
    assert _check(steps, "T4.6", *two, enemy("Omega Room", "Enemy 3")) == (True, True)
    assert _check(steps, "T5.8") == (False, False)  # the original passed doing nothing
