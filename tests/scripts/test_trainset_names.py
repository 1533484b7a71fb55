"""The project's trainsets name the benchmark's tools only by catalog position."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.paths import SCRIPTS_DIR
from tests.support.scripts import load_script

SCRIPT = SCRIPTS_DIR / "refer_trainset_names.py"


def test_project_trainsets_refer_by_position(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load_script("refer_trainset_names").main(["--check", "--data", str(data_dir)]) == 0
    assert "every label refers by position" in capsys.readouterr().out


@pytest.fixture
def trainsets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder holding copies of the project's trainsets."""
    monkeypatch.setenv("FREYR_PROJECT_DIR", str(tmp_path))
    (tmp_path / "trainsets").mkdir()
    for name in ("nlt-alex", "nlt-sage", "callnavi"):
        shutil.copy(SCRIPT.parent.parent / "trainsets" / f"{name}.jsonl", tmp_path / "trainsets")
    return tmp_path / "trainsets"


def test_rows_written_with_names_are_rewritten_and_load_the_same(
    data_dir: Path, trainsets: Path
) -> None:
    from freyr_dspy.benchmarks import EvalOptions, get_benchmark

    module, tmp_path = load_script("refer_trainset_names"), trainsets
    options = EvalOptions(data_dir=data_dir)
    before = get_benchmark("callnavi").train_episodes(tmp_path, options)
    # one row spelled out by hand, as a new row would be written
    rows = (tmp_path / "callnavi.jsonl").read_text(encoding="utf-8").splitlines()
    spelled = json.loads(rows[0])
    gold = before[0].steps[0].expected["gold"]
    spelled["ground_truth"] = gold
    rows[0] = json.dumps(spelled)
    (tmp_path / "callnavi.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert module.main(["--check", "--data", str(data_dir)]) == 1
    assert module.main(["--data", str(data_dir)]) == 0
    assert module.main(["--check", "--data", str(data_dir)]) == 0
    assert gold["API"][0] not in (tmp_path / "callnavi.jsonl").read_text(encoding="utf-8")
    assert get_benchmark("callnavi").train_episodes(tmp_path, options) == before


def test_a_label_its_catalog_lacks_is_one_line_with_path_and_line(
    data_dir: Path, trainsets: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = trainsets / "nlt-sage.jsonl"
    rows = path.read_text(encoding="utf-8").splitlines()
    rows[1] = json.dumps({**json.loads(rows[1]), "expected_tools": ["Horoscopes"]})
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert load_script("refer_trainset_names").main(["--data", str(data_dir)]) == 2
    assert path.read_text(encoding="utf-8") == before  # nothing half-written
    err = capsys.readouterr().err
    assert err.strip() == f"error: {path}:2: cannot relabel the row: unknown name 'Horoscopes'"
