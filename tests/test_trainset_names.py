"""The project's trainsets name the benchmark's tools only by catalog position."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "refer_trainset_names.py"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refer_trainset_names", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_project_trainsets_refer_by_position(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert script().main(["--check", "--data", str(data_dir)]) == 0
    assert "every label refers by position" in capsys.readouterr().out


def test_rows_written_with_names_are_rewritten_and_load_the_same(
    data_dir: Path, tmp_path: Path
) -> None:
    from freyr_dspy.benchmarks import EvalOptions, get_benchmark

    module = script()
    module.TRAINSETS = tmp_path
    for name in ("nlt-alex", "nlt-sage", "callnavi"):
        shutil.copy(SCRIPT.parent.parent / "trainsets" / f"{name}.jsonl", tmp_path)
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
