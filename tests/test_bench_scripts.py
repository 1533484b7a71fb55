"""The bench scripts run: a script that only runs on a long model job must not rot unseen."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from freyr_dspy.testing import unregister_fake

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_script(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # the scripts import their siblings (provenance)
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def test_the_overhead_bench_splits_a_step_into_its_layers() -> None:
    bench = load_script("bench_overhead")
    try:
        report = bench.measure_overhead(3)
    finally:
        unregister_fake("bench_instant")
    split = report["mean_ms_split"]
    assert report["lm_calls_per_step"] == 5 and report["tools_in_catalog"] == 16
    assert split["dspy_adapter_format_parse"] > 0 and split["fake_engine"] > 0
    assert report["overhead_ms_per_step"] > 0


def test_saved_eval_results_keep_the_tables_not_the_steps_or_paths() -> None:
    save = load_script("save_eval_results")
    report = {
        "config": {"benchmarks": ["b"], "data_dir": "/somewhere/data", "runs": 1, "jobs": 2},
        "benchmarks": {"b": {"cases": {"all": {"freyr": {}}}, "steps": [{"step": "T1.1"}]}},
        "records": [
            {"strategy": "freyr", "run": 0, "episode": "e1"},
            {"strategy": "freyr", "run": 0, "episode": "e1"},
        ],
    }
    summary = save.summarise(report, command="freyr eval --benchmark b")
    assert summary["benchmarks"] == {"b": {"cases": {"all": {"freyr": {}}}}}
    assert summary["config"] == {"benchmarks": ["b"], "runs": 1}
    assert (summary["steps_recorded"], summary["units_recorded"]) == (2, 1)
    assert summary["command"] == "freyr eval --benchmark b"
