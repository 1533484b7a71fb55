"""Training rows: row-by-row validation with path:line, declarative assertions, scoring."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from freyr_dspy.benchmarks import EvalOptions
from freyr_dspy.benchmarks.llmaker._assertions import evaluate_assertions
from freyr_dspy.benchmarks.llmaker._benchmark import LLMAKER_BENCHMARK
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.benchmarks.llmaker._trainset import (
    ASSERTIONS,
    TRAINSET_FILE,
    load_trainset,
    train_episodes,
)
from freyr_dspy.errors import DataError
from freyr_dspy.program import to_prediction
from freyr_dspy.schemas import Result
from tests.support.llmaker_helpers import apply, enemy, room
from tests.support.paths import TRAINSETS_DIR

PROJECT_TRAINSET = TRAINSETS_DIR / TRAINSET_FILE
HALL = apply(Level(), room("Hall"))


def _row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "hall-ogre",
        "request": "Add an ogre with 30 health to the hall",
        "level": HALL.model_dump(mode="json"),
        "expected": {
            "intents": ["add_enemy"],
            "assertions": [
                {"kind": "count", "what": "enemies", "area": "Hall", "delta": 1},
                {
                    "kind": "entity",
                    "type": "enemy",
                    "area": "Hall",
                    "match": {"name": "ogre", "hp": 30},
                },
            ],
            "calls": [
                {
                    "tool": "add_enemy",
                    "arguments": {
                        "room_name": "Hall",
                        "name": "Ogre",
                        "description": "An ogre",
                        "species": "Ogre",
                        "hp": 30,
                        "dodge": 0.5,
                        "prot": 0.5,
                        "spd": 0.5,
                        "cell_index": -1,
                    },
                }
            ],
        },
    }
    row.update(changes)
    return row


def _write(tmp_path: Path, *rows: dict[str, Any] | str) -> Path:
    path = tmp_path / TRAINSET_FILE
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_sound_row_loads(tmp_path: Path) -> None:
    (row,) = load_trainset(_write(tmp_path, _row()))
    assert row.level == HALL and row.expected.intents == ["add_enemy"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", r":1: invalid JSON"),
        (json.dumps(_row(request="")), r":1: request: String should have at least 1 character"),
        (json.dumps(_row(level={"rooms": [], "extra": 1})), r":1: level.extra: Extra inputs"),
        (
            json.dumps(_row(expected={"intents": [], "assertions": [{"kind": "weird"}]})),
            r":1: expected.assertions.0: Input tag 'weird'",
        ),
        (
            json.dumps(_row(expected={**_row()["expected"], "intents": ["add_monster"]})),
            r":1: row 'hall-ogre': unknown tool names in intents: add_monster",
        ),
        (
            json.dumps(
                _row(
                    expected={
                        **_row()["expected"],
                        "calls": [{"tool": "add_enemy", "arguments": {"room_name": "Attic"}}],
                    }
                )
            ),
            r":1: row 'hall-ogre': gold call add_enemy fails",
        ),
        (
            json.dumps(
                _row(
                    expected={
                        **_row()["expected"],
                        "assertions": [{"kind": "count", "what": "rooms", "equals": 1}],
                    }
                )
            ),
            r":1: row 'hall-ogre': doing nothing already passes every assertion",
        ),
        (
            json.dumps(
                _row(
                    expected={
                        **_row()["expected"],
                        "assertions": [{"kind": "count", "what": "rooms", "equals": 2}],
                    }
                )
            ),
            r":1: row 'hall-ogre': the gold calls fail assertions \[0\]",
        ),
    ],
)
def test_bad_rows_are_reported_with_path_and_line(tmp_path: Path, bad: str, message: str) -> None:
    with pytest.raises(DataError, match=rf"{TRAINSET_FILE}{message}"):
        load_trainset(_write(tmp_path, bad))


def test_duplicate_ids_and_later_lines(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=rf"{TRAINSET_FILE}:3: duplicate id 'hall-ogre'"):
        load_trainset(_write(tmp_path, _row(), "", _row()))


def test_empty_or_missing_trainset(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="has no rows"):
        load_trainset(_write(tmp_path, ""))
    with pytest.raises(DataError, match="cannot read trainset"):
        load_trainset(tmp_path / "missing.jsonl")


def test_assertion_kinds() -> None:
    after = apply(
        HALL,
        room("Cellar", "Hall", "south"),
        enemy("Cellar", "Giant Rat", hp=12),
        (
            "add_attack",
            {
                "room_name": "Cellar",
                "cell_index": -1,
                "enemy_name": "Giant Rat",
                "name": "Bite",
                "description": "b",
                "attack_type": "damage",
                "starting_positions": "XOOO",
                "target_positions": "XXOO",
                "base_dmg": 1,
                "accuracy": 0.5,
            },
        ),
    )
    checks = ASSERTIONS.validate_python(
        [
            {"kind": "count", "what": "rooms", "equals": 2},
            {"kind": "count", "what": "enemies", "area": "current", "delta": 1},
            {"kind": "room", "name": "cell", "connected_to": "Hall", "direction": "south"},
            {"kind": "room", "name": "Attic", "exists": False},
            {"kind": "corridor", "between": ["Cellar", "Hall"], "length": 2},
            {"kind": "entity", "type": "enemy", "match": {"name": "rat", "hp": 12}},
            {"kind": "attack", "enemy": "rat", "match": {"name": "bite", "base_dmg": 1}},
            {"kind": "current", "area": "Cellar", "is_corridor": False},
        ]
    )
    assert evaluate_assertions(checks, HALL, after) == (True, True, [])
    wrong = ASSERTIONS.validate_python(
        [
            {"kind": "room", "name": "cell", "connected_to": "Hall", "direction": "north"},
            {"kind": "entity", "type": "enemy", "match": {"hp": 13}},
            {"kind": "unchanged"},
        ]
    )
    assert evaluate_assertions(wrong, HALL, after) == (False, False, [0, 1, 2])
    design_only = ASSERTIONS.validate_python([{"kind": "entity", "type": "trap"}])
    assert evaluate_assertions(design_only, HALL, after) == (True, False, [0])


def test_training_steps_are_scored_by_the_benchmark(tmp_path: Path) -> None:
    _write(tmp_path, _row())
    (episode,) = train_episodes(tmp_path)
    step = episode.steps[0]
    assert step.start_state == HALL.model_dump(mode="json")
    right = apply(HALL, enemy("Hall", "Ogre", hp=30))
    prediction = to_prediction(
        Result(reply="", strategy="freyr", intents=["add_enemy"], state=right)
    )
    score = LLMAKER_BENCHMARK.score(step, HALL, prediction)
    assert score.success == 1.0 and score.metrics["intents"] == 1.0
    weak = apply(HALL, enemy("Hall", "Ogre", hp=3))
    prediction = to_prediction(Result(reply="", strategy="freyr", state=weak))
    score = LLMAKER_BENCHMARK.score(step, HALL, prediction)
    assert (score.success, score.failure_kind, score.diagnostics["failed_assertions"]) == (
        0.0,
        "design",
        [1],
    )


# --------------------------------------------------------------------------- the shipped rows


def test_project_trainset_is_sound_and_large_enough() -> None:
    rows = load_trainset(PROJECT_TRAINSET)
    assert len(rows) >= 40
    used = {name for row in rows for name in row.expected.intents}
    assert used >= {
        "create_room",
        "add_enemy",
        "add_treasure",
        "add_trap",
        "remove_entity",
        "update_enemy_properties",
        "conversation",
    }
    episodes = LLMAKER_BENCHMARK.train_episodes(
        PROJECT_TRAINSET.parent, EvalOptions(data_dir=Path("."))
    )
    assert len(episodes) == len(rows) and all(e.steps[0].start_state for e in episodes)


def test_project_trainset_shares_no_request_with_the_test_set(llmaker_data: Path) -> None:
    test_cases = json.loads((llmaker_data / "test_cases.json").read_text(encoding="utf-8"))
    tested = {" ".join(r.lower().split()) for case in test_cases.values() for r in case["requests"]}
    trained = {" ".join(row.request.lower().split()) for row in load_trainset(PROJECT_TRAINSET)}
    assert trained.isdisjoint(tested)
