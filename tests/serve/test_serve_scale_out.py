"""Several ``freyr serve`` processes share one model server (``bench_serve.py --scale-out``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from freyr_dspy.backends import is_installed
from tests.support.scripts import load_script

SMALL = "embedded/smollm2-135m"

pytestmark = [
    pytest.mark.slow,  # three servers and two short load phases: about two minutes
    pytest.mark.server,
    pytest.mark.skipif(not is_installed(SMALL), reason="SmolLM2 is not installed"),
]


def test_two_processes_on_one_model_server_lose_nothing(tmp_path: Path) -> None:
    bench = load_script("bench_serve")
    out = tmp_path / "scale_out.json"
    argv = ["--scale-out", "--model", SMALL, "--clients", "4", "--seconds", "8"]
    assert bench.main([*argv, "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    one, two = report["phases"]
    assert (one["processes"], two["processes"]) == (1, 2)
    for phase in (one, two):
        assert phase["lost"] == phase["malformed"] == 0, phase["problems"]
    assert len(one["answers_per_process"]) == 1 and one["answers_per_process"][0] > 0
    assert len(two["answers_per_process"]) == 2 and min(two["answers_per_process"]) > 0
