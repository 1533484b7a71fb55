"""``scripts/bench_serve.py`` runs briefly: nothing lost or malformed, 503s only past the bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripts import load_script

pytestmark = pytest.mark.server


@pytest.mark.parametrize(("clients", "max_queue"), [(3, 2), (4, 0)])
def test_the_load_test_loses_nothing_and_refuses_only_past_the_queue(
    tmp_path: Path, clients: int, max_queue: int
) -> None:
    bench = load_script("bench_serve")
    out = tmp_path / "bench.json"
    argv = ["--clients", str(clients), "--max-queue", str(max_queue), "--seconds", "1"]
    assert bench.main([*argv, "--in-process", "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    crowd = report["phases"][f"{clients} clients"]
    assert crowd["completed"] > 0 and report["phases"]["one client"]["completed"] > 0
    assert crowd["lost"] == crowd["malformed"] == 0
    past_the_bound = clients > max_queue + 1
    assert (crowd["refused_503"] > 0) == past_the_bound
    assert crowd["overhead_ms_p50"] is not None and crowd["program_ms_p50"] > 0


def test_the_first_chunk_mode_times_each_kind_of_answer(tmp_path: Path) -> None:
    bench = load_script("bench_serve")
    out = tmp_path / "first.json"
    argv = ["--first-chunk", "--model", "fake/rules", "--repeats", "1", "--out", str(out)]
    assert bench.main(argv) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert list(rows) == ["chat reply", "tool call", "summary"]
    for row in rows.values():
        assert 0 < row["first_chunk_ms"] <= row["full_reply_ms"] and row["not_streamed_ms"] > 0
