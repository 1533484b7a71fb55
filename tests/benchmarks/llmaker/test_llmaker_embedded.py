"""FREYR on the real embedded model for one LLMaker request (slow on a loaded machine)."""

from __future__ import annotations

import pytest

from freyr_dspy.benchmarks import EvalOptions
from freyr_dspy.benchmarks.llmaker._benchmark import LLMAKER_BENCHMARK
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.schemas import Result, RoleModel, Sampling
from tests.support.llmaker_helpers import apply, room

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def test_freyr_edits_a_level_with_the_embedded_model(tmp_path: object) -> None:
    program = LLMAKER_BENCHMARK.make_program(
        "freyr", EvalOptions(data_dir=tmp_path, extra={"max_retries": 0})
    )  # type: ignore[arg-type]
    spec = RoleModel(
        model="embedded/smollm2-135m", sampling=Sampling(temperature=0.0, seed=5, max_tokens=96)
    )
    program.apply_assignment({role: spec for role in program.role_names})
    level = apply(Level(), room("Ice Cave"))
    result: Result = program(message="Add a snow wolf to the Ice Cave", state=level).result
    assert set(result.usage) <= {"intent", "confirm", "parameters", "summary", "chat"}
    assert result.usage["intent"].input_tokens > 200
    assert isinstance(result.state, Level)
    assert result.reply or result.failure
    for call in result.calls:  # every attempt was validated by the domain, never crashed it
        assert (
            call.outcome.ok
            or "failed" in call.outcome.message
            or "argument" in call.outcome.message
        )
