"""``scripts/bench_serve.py`` runs briefly: nothing lost or malformed, 503s only past the bound."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import SCRIPTS_DIR

SCRIPTS = SCRIPTS_DIR

pytestmark = pytest.mark.server


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_serve", SCRIPTS / "bench_serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_serve"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("clients", "max_queue"), [(3, 2), (4, 0)])
def test_the_load_test_loses_nothing_and_refuses_only_past_the_queue(
    tmp_path: Path, clients: int, max_queue: int
) -> None:
    bench = load_bench()
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
