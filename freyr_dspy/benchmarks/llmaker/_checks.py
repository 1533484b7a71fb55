"""Building blocks of the LLMaker step checks (FREYR ``validators.py``, spec §3.2).

The checks keep FREYR's semantics, including its reliance on ``current_room``: ``enc(L)``
is the encounter of ``L.current_room`` looked up as a *room* (a corridor there raises, and
the caller counts the check as False), and deltas compare the old current room with the new
one, which may be different rooms. ``steps.py`` assembles them into the 50 step checks and
documents where they deviate from the original.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from freyr_dspy.benchmarks.llmaker._config import BENCHMARK_CONFIG
from freyr_dspy.benchmarks.llmaker._models import Corridor, Encounter, Level

__all__ = [
    "IntentRule",
    "StepCheck",
    "all_of",
    "always",
    "any_of",
    "corridor_delta",
    "delta",
    "exactly",
    "fill_room",
    "first_enemy_hp",
    "first_new_hp_value",
    "first_room_first_enemy_halved",
    "new_enemies_hp_sum",
    "new_enemy_hp",
    "one_new",
    "one_treasure_each",
    "removed_one_treasure",
    "room_holds_enemies",
    "several",
    "size",
    "unchanged",
]

Check = Callable[[Level, Level], bool]


@dataclass(frozen=True)
class IntentRule:
    """Which tool names a correct intent list contains (a diagnostic, never a success gate).

    ``allowed`` bounds every name; ``required`` must all appear; ``count`` is the exact
    length and ``at_least`` the minimum length.
    """

    allowed: frozenset[str]
    required: frozenset[str] = frozenset()
    count: int | None = None
    at_least: int | None = None

    def holds(self, intents: Sequence[str]) -> bool:
        """Tell whether an intent list meets the rule."""
        names = set(intents)
        return (
            bool(intents)
            and names <= self.allowed
            and self.required <= names
            and (self.count is None or len(intents) == self.count)
            and (self.at_least is None or len(intents) >= self.at_least)
        )

    def describe(self) -> str:
        """The rule in words, for reports."""
        size = (
            f"exactly {self.count}"
            if self.count is not None
            else f"at least {self.at_least}"
            if self.at_least is not None
            else "any number"
        )
        return f"{size} of {sorted(self.allowed)}" + (
            f", including {sorted(self.required)}" if self.required else ""
        )


def exactly(name: str, count: int = 1) -> IntentRule:
    """``count`` intents, all ``name``."""
    return IntentRule(frozenset({name}), frozenset({name}), count=count)


def several(name: str, at_least: int = 2) -> IntentRule:
    """At least ``at_least`` intents, all ``name``."""
    return IntentRule(frozenset({name}), frozenset({name}), at_least=at_least)


@dataclass(frozen=True)
class StepCheck:
    """Domain check, design check and expected intents of one test step."""

    domain: Check
    design: Check
    intents: IntentRule
    deviation: str = field(default="")


# --------------------------------------------------------------------------- primitives


def enc(level: Level) -> Encounter:
    """The encounter of the current area as a room.

    Raises:
        LookupError: when the current area is not a room (the check then fails).
    """
    room = level.room(level.current_room)
    if room is None:
        raise LookupError(f"current area {level.current_room!r} is not a room")
    return room.encounter


def current_corridor(level: Level) -> Corridor:
    """The current area as a corridor.

    Raises:
        LookupError: when the current area is not a corridor.
    """
    corridor = level.corridor(level.current_room)
    if corridor is None:
        raise LookupError(f"current area {level.current_room!r} is not a corridor")
    return corridor


def always(old: Level, new: Level) -> bool:
    """A check that always holds (FREYR's ``True``)."""
    return True


def size(rooms: int, corridors: int | None = None, changed: bool = True) -> Check:
    """#rooms (and #corridors) of the new level, and optionally "current area changed"."""

    def check(old: Level, new: Level) -> bool:
        return (
            len(new.rooms) == rooms
            and (corridors is None or len(new.corridors) == corridors)
            and (not changed or new.current_room != old.current_room)
        )

    return check


def delta(attribute: str, test: Callable[[int], bool]) -> Check:
    """``test`` on #entities of the new current room minus those of the old current room."""

    def check(old: Level, new: Level) -> bool:
        return test(len(getattr(enc(new), attribute)) - len(getattr(enc(old), attribute)))

    return check


def corridor_delta(attribute: str, test: Callable[[int], bool], last_cell: bool = False) -> Check:
    """``test`` on the change of entities in the new current corridor (or its last cell)."""

    def check(old: Level, new: Level) -> bool:
        after = current_corridor(new)
        before = old.corridor(after.name)
        if before is None:
            return False
        cells_after = after.cells[-1:] if last_cell else after.cells
        cells_before = before.cells[-1:] if last_cell else before.cells
        return test(
            sum(len(getattr(c, attribute)) for c in cells_after)
            - sum(len(getattr(c, attribute)) for c in cells_before)
        )

    return check


def all_of(*checks: Check) -> Check:
    """All of ``checks`` hold."""
    return lambda old, new: all(c(old, new) for c in checks)


def any_of(*checks: Check) -> Check:
    """At least one of ``checks`` holds."""
    return lambda old, new: any(c(old, new) for c in checks)


def _new_enemies(old: Level, new: Level) -> list[float]:
    """Hp of the enemies of the new current room whose names the old current room lacked."""
    names = {e.name for e in enc(old).enemies}
    return [e.hp for e in enc(new).enemies if e.name not in names]


def new_enemy_hp(hp: float) -> Check:
    """The first enemy of the new current room with a new name has ``hp``."""
    return lambda old, new: _new_enemies(old, new)[:1] == [hp]


def new_enemies_hp_sum(total: float) -> Check:
    """The enemies of the new current room with new names have ``total`` hp together."""
    return lambda old, new: bool(_new_enemies(old, new)) and sum(_new_enemies(old, new)) == total


def first_enemy_hp(hp: float) -> Check:
    """The first enemy of the new current room has ``hp``."""
    return lambda old, new: enc(new).enemies[0].hp == hp


def room_holds_enemies(count: int) -> Check:
    """The new current room holds exactly ``count`` enemies (an absolute count)."""
    return lambda old, new: len(enc(new).enemies) == count


def unchanged(old: Level, new: Level) -> bool:
    """The whole level is identical, current area included (see module docstring)."""
    return old == new


def first_room_first_enemy_halved(old: Level, new: Level) -> bool:
    """T1.6: the first enemy of the first room (level order) has half its old hp."""
    return old.rooms[0].encounter.enemies[0].hp == 2 * new.rooms[0].encounter.enemies[0].hp


def one_new(attribute: str) -> Check:
    """Exactly one enemy of the new current room has a name/description not seen before."""

    def check(old: Level, new: Level) -> bool:
        seen = {getattr(e, attribute) for e in enc(old).enemies}
        return sum(getattr(e, attribute) not in seen for e in enc(new).enemies) == 1

    return check


def first_new_hp_value(hp: float) -> Check:
    """Among enemies whose hp value the old current room lacked, the first has ``hp``."""

    def check(old: Level, new: Level) -> bool:
        seen = {e.hp for e in enc(old).enemies}
        fresh = [e.hp for e in enc(new).enemies if e.hp not in seen]
        return bool(fresh) and fresh[0] == hp

    return check


def fill_room(requested: int) -> Check:
    """T4.6 (fixed): the current room gains min(requested, free capacity) enemies."""

    def check(old: Level, new: Level) -> bool:
        free = BENCHMARK_CONFIG.max_enemies - len(enc(old).enemies)
        gained = len(enc(new).enemies) - len(enc(old).enemies)
        return gained > 0 and gained == min(requested, free)

    return check


def _treasure_per_room(old: Level, new: Level) -> list[int]:
    """Treasure count change of every room of the new level (KeyError for a new room)."""
    before = {r.name: len(r.encounter.treasures) for r in old.rooms}
    return [len(r.encounter.treasures) - before[r.name] for r in new.rooms]


def one_treasure_each(old: Level, new: Level) -> bool:
    """T5.7: every room of the new level holds exactly one treasure more than before."""
    return all(d == 1 for d in _treasure_per_room(old, new))


def _mentions_second_piece(loot: str, description: str) -> bool:
    return bool(re.search(r"\b(piece 2|2nd|second)\b", f"{loot} {description}".lower()))


def removed_one_treasure(old: Level, new: Level) -> bool:
    """T5.8 (fixed): exactly one room treasure was removed and none added or changed.

    When exactly one chest held the second map piece, it must be the one removed.
    """
    before = {r.name: r.encounter.treasures for r in old.rooms}
    if {r.name for r in new.rooms} != set(before):
        return False
    removed = []
    for room in new.rooms:
        after = room.encounter.treasures
        if any(t not in before[room.name] for t in after):
            return False
        removed += [(room.name, t) for t in before[room.name] if t not in after]
    marked = [
        (name, t)
        for name, items in before.items()
        for t in items
        if _mentions_second_piece(t.loot, t.description)
    ]
    return len(removed) == 1 and (len(marked) != 1 or removed[0] == marked[0])
