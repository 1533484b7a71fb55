"""The harness on the real embedded default: fresh, seeded, reproducible runs (4 short calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import freyr_dspy.benchmarks as benchmarks_module
from freyr_dspy.backends import shared_engine
from freyr_dspy.evaluation import EvalConfig, evaluate
from tests.support.tiny_benchmark import NAME, install

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"


def test_runs_get_their_own_seed_and_repeat_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(benchmarks_module.BENCHMARKS, "modules", ())
    install(monkeypatch)
    engine = shared_engine(MODEL)
    seeds: list[Any] = []
    real = engine.complete

    def spy(request: Any) -> Any:
        seeds.append(request.config.seed)
        return real(request)

    monkeypatch.setattr(engine, "complete", spy)
    config = EvalConfig(
        benchmarks=(NAME,),
        data_dir=Path(),
        strategies=("lazy",),
        runs=2,
        limit=1,
        default_model=MODEL,
        sampling_specs=("temperature=0.8", "top_p=0.6", "max_tokens=8"),
    )
    first = evaluate(config)
    second = evaluate(config)
    assert seeds == [0, 1, 0, 1]  # one chat call per run; run r samples with seed r
    for record in first.records:
        assert record.lm_calls == 1 and record.input_tokens > 50 and record.output_tokens > 0
        assert 0 <= record.cached_input_tokens < record.input_tokens  # the prefix cache
        assert record.seconds > 0
    assert [r.reply for r in first.records] == [r.reply for r in second.records]
