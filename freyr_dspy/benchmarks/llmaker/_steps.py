"""The 50 step checks of the LLMaker test set T1-T5, and their evaluation.

``STEP_CHECKS[("T2", 4)]`` holds the domain check, design check and expected intents of test
case T2, step 4 (1-based, as in the paper). ``evaluate_step`` applies FREYR's rule: the
design check counts only when the domain check holds, and any exception inside a check is
a failure. A step succeeds when its design check holds.

Deviations from FREYR's ``validators.py``, so that an agent making the right edit scores
50/50 (each is also recorded in the step's ``deviation`` and in step diagnostics):

* **T4.2** design was hard-coded False; here it is True (the domain check already demands
  exactly one new treasure, as the CoG'24 version did).
* **T4.6** demanded 4 new enemies in a room that starts with 1 and holds at most 4; here the
  room must be filled: ΔE == min(5, capacity - enemies before) (3 in bootstrap mode, 4 in
  iterative mode when step 4 added a treasure instead of an enemy).
* **T5.8** only passed when *no* treasure was removed; here exactly one room treasure must be
  removed and nothing else changed among them, and when exactly one chest holds the second
  map piece ("piece 2"/"second"), it must be that one.
* **T1.7 and T4.5** ("level unchanged") compare the full level, not FREYR's reduced JSON
  dump, which dropped entity stats, loot and effects (spec §1.6): a stat change is a change.
* Expected intents (diagnostic only): T5.1 expects 3 ``create_room`` (not 5); T4.4 uses the
  intended "exactly one of add_enemy/add_treasure" (the original had a precedence bug).

The hp steps (T2.2, T2.9, T3.4, T3.8, T3.10, T5.12) need ``LevelConfig.max_hp >= 1000`` (the
benchmark default), and T2.6 needs the corrected ``create_room`` rule (see ``rooms.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from freyr_dspy.benchmarks.llmaker._checks import (
    IntentRule,
    StepCheck,
    all_of,
    always,
    any_of,
    corridor_delta,
    delta,
    exactly,
    fill_room,
    first_enemy_hp,
    first_new_hp_value,
    first_room_first_enemy_halved,
    new_enemies_hp_sum,
    new_enemy_hp,
    one_new,
    one_treasure_each,
    removed_one_treasure,
    room_holds_enemies,
    several,
    size,
    unchanged,
)
from freyr_dspy.benchmarks.llmaker._models import Level

__all__ = ["STEP_CHECKS", "evaluate_step", "get_step_check"]

logger = logging.getLogger(__name__)


def _eq(n: int) -> Callable[[int], bool]:
    return lambda d: d == n


def _gt(n: int) -> Callable[[int], bool]:
    return lambda d: d > n


_ROOM = "create_room"
_ENEMY, _TREASURE, _TRAP = "add_enemy", "add_treasure", "add_trap"
_UPDATE = "update_enemy_properties"
_ENEMY_AND_TREASURE = IntentRule(
    frozenset({_ENEMY, _TREASURE}), frozenset({_ENEMY, _TREASURE}), count=2
)

STEP_CHECKS: dict[tuple[str, int], StepCheck] = {
    ("T1", 1): StepCheck(size(1), always, exactly(_ROOM)),
    ("T1", 2): StepCheck(delta("enemies", _gt(1)), always, several(_ENEMY)),
    ("T1", 3): StepCheck(size(2, 1), always, exactly(_ROOM)),
    ("T1", 4): StepCheck(
        all_of(delta("enemies", _gt(0)), delta("treasures", _gt(0))), always, _ENEMY_AND_TREASURE
    ),
    ("T1", 5): StepCheck(corridor_delta("traps", _gt(0)), always, several(_TRAP)),
    ("T1", 6): StepCheck(always, first_room_first_enemy_halved, exactly(_UPDATE)),
    ("T1", 7): StepCheck(
        unchanged,
        always,
        exactly(_TRAP),
        "level unchanged compares the full level, not a reduced dump",
    ),
    ("T2", 1): StepCheck(size(1), always, exactly(_ROOM)),
    ("T2", 2): StepCheck(delta("enemies", _eq(1)), new_enemy_hp(50.0), exactly(_ENEMY)),
    ("T2", 3): StepCheck(size(2, 1), always, exactly(_ROOM)),
    ("T2", 4): StepCheck(
        corridor_delta("treasures", _eq(1), last_cell=True), always, exactly(_TREASURE)
    ),
    ("T2", 5): StepCheck(corridor_delta("traps", _eq(1)), always, exactly(_TRAP)),
    ("T2", 6): StepCheck(size(3, 2, changed=False), always, exactly(_ROOM)),
    ("T2", 7): StepCheck(
        all_of(delta("enemies", _eq(1)), delta("treasures", _eq(1))), always, _ENEMY_AND_TREASURE
    ),
    ("T2", 8): StepCheck(size(4, 3, changed=False), always, exactly(_ROOM)),
    ("T2", 9): StepCheck(room_holds_enemies(1), first_enemy_hp(80.0), exactly(_ENEMY)),
    ("T3", 1): StepCheck(size(1), always, exactly(_ROOM)),
    ("T3", 2): StepCheck(size(2, 1), always, exactly(_ROOM)),
    ("T3", 3): StepCheck(delta("treasures", _eq(1)), always, exactly(_TREASURE)),
    ("T3", 4): StepCheck(delta("enemies", _eq(1)), new_enemy_hp(60.0), exactly(_ENEMY)),
    ("T3", 5): StepCheck(size(3, 2), always, exactly(_ROOM)),
    ("T3", 6): StepCheck(delta("enemies", _gt(0)), new_enemies_hp_sum(40.0), exactly(_ENEMY)),
    ("T3", 7): StepCheck(size(4, 3), always, exactly(_ROOM)),
    ("T3", 8): StepCheck(delta("enemies", _eq(1)), new_enemy_hp(70.0), exactly(_ENEMY)),
    ("T3", 9): StepCheck(size(5, 4), always, exactly(_ROOM)),
    ("T3", 10): StepCheck(delta("enemies", _eq(1)), new_enemy_hp(100.0), exactly(_ENEMY)),
    ("T4", 1): StepCheck(size(1), always, exactly(_ROOM)),
    ("T4", 2): StepCheck(
        delta("treasures", _eq(1)),
        always,
        exactly(_TREASURE),
        "design was hard-coded False in validators.py",
    ),
    ("T4", 3): StepCheck(size(2, 1), always, exactly(_ROOM)),
    ("T4", 4): StepCheck(
        any_of(delta("treasures", _eq(1)), delta("enemies", _eq(1))),
        always,
        IntentRule(frozenset({_ENEMY, _TREASURE}), count=1),
        "intent rule without the original's operator-precedence bug",
    ),
    ("T4", 5): StepCheck(
        unchanged,
        always,
        exactly(_TRAP),
        "level unchanged compares the full level, not a reduced dump",
    ),
    ("T4", 6): StepCheck(
        fill_room(5),
        always,
        several(_ENEMY, 3),
        "fill the room up to its capacity instead of +4 into a room with 1",
    ),
    **{("T4", k): StepCheck(size(k - 4, k - 5), always, exactly(_ROOM)) for k in range(7, 12)},
    ("T5", 1): StepCheck(
        size(3, 2), always, exactly(_ROOM, 3), "expects 3 create_room intents, not 5"
    ),
    ("T5", 2): StepCheck(delta("enemies", _eq(1)), always, exactly(_ENEMY)),
    ("T5", 3): StepCheck(delta("enemies", _eq(2)), always, exactly(_ENEMY, 2)),
    ("T5", 4): StepCheck(size(4, 3), always, exactly(_ROOM)),
    ("T5", 5): StepCheck(delta("enemies", _gt(1)), always, several(_ENEMY)),
    ("T5", 6): StepCheck(corridor_delta("traps", _gt(1)), always, several(_TRAP)),
    ("T5", 7): StepCheck(one_treasure_each, always, several(_TREASURE)),
    ("T5", 8): StepCheck(
        removed_one_treasure,
        always,
        exactly("remove_entity"),
        "the correct removal passes (the original demanded no removal)",
    ),
    ("T5", 9): StepCheck(size(5, 4), always, exactly(_ROOM)),
    ("T5", 10): StepCheck(delta("enemies", _eq(2)), always, several(_ENEMY)),
    ("T5", 11): StepCheck(always, one_new("name"), exactly(_UPDATE)),
    ("T5", 12): StepCheck(always, first_new_hp_value(1000.0), exactly(_UPDATE)),
    ("T5", 13): StepCheck(always, one_new("description"), exactly(_UPDATE)),
}


def get_step_check(case: str, step: int) -> StepCheck:
    """Return the checks of test case ``case`` (``T1``..``T5``), 1-based ``step``.

    Raises:
        KeyError: for a step the test set does not have.
    """
    return STEP_CHECKS[(case, step)]


def run_check(check: Callable[[Level, Level], bool], old: Level, new: Level) -> bool:
    """Apply one check; an exception inside it (e.g. no current room) means False."""
    try:
        return bool(check(old, new))
    except (LookupError, IndexError, ValueError, TypeError, AttributeError) as exc:
        logger.debug("check failed with %s: %s", type(exc).__name__, exc)
        return False


def evaluate_step(check: StepCheck, old: Level, new: Level) -> tuple[bool, bool]:
    """Return (domain, design) for one step; design is False whenever domain is."""
    domain = run_check(check.domain, old, new)
    return domain, domain and run_check(check.design, old, new)
