"""Lossless JSON load/save of levels in the benchmark's file layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.benchmarks.llmaker._levels import dumps_level, load_level, read_level, write_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.errors import DataError
from tests.support.llmaker_helpers import apply, enemy, room

SMALL = """{
  "rooms": [
    {
      "name": "Hall",
      "description": "A hall",
      "coords": [0, 0],
      "encounter": {
        "enemies": [
          {
            "name": "Rat",
            "description": "A rat",
            "species": "Unknown",
            "hp": 5.0,
            "dodge": 0.5,
            "prot": 0.5,
            "spd": 0.5,
            "attacks": []
          }
        ],
        "traps": [],
        "treasures": []
      }
    }
  ],
  "corridors": [],
  "connections": {
    "Hall": {
      "north": "",
      "south": "",
      "east": "",
      "west": ""
    }
  },
  "current_room": "Hall"
}
"""


def test_small_level_round_trips_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "level.json"
    path.write_text(SMALL, encoding="utf-8")
    level = read_level(path)
    assert level.rooms[0].encounter.enemies[0].hp == 5.0
    assert dumps_level(level) == SMALL
    write_level(level, tmp_path / "copy.json")
    assert (tmp_path / "copy.json").read_text(encoding="utf-8") == SMALL
    assert not list(tmp_path.glob("*.tmp"))


def test_built_level_round_trips(two_rooms: Level) -> None:
    level = apply(two_rooms, enemy("West Room-East Room", "Bat", cell=1))
    assert load_level(json.loads(dumps_level(level))) == level
    assert '"coords": [\n        [1, 0],\n        [2, 0]\n      ]' in dumps_level(level)


def test_every_benchmark_level_round_trips_losslessly(llmaker_data: Path) -> None:
    files = sorted((llmaker_data / "levels").rglob("*.json"))
    assert len(files) == 46
    for path in files:
        assert dumps_level(read_level(path)) == path.read_text(encoding="utf-8"), path


def test_unknown_key_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(SMALL.replace('"current_room"', '"current_rom"'), encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json: invalid level: current_rom: Extra inputs"):
        read_level(path)


def test_invalid_json_reports_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(SMALL.replace('"A hall",', '"A hall"'), encoding="utf-8")
    with pytest.raises(DataError, match=r"broken\.json:6: invalid JSON"):
        read_level(path)


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read level file"):
        read_level(tmp_path / "nope.json")


def test_load_level_accepts_a_level() -> None:
    level = apply(Level(), room("Hall"))
    assert load_level(level) is level
