"""``nlt`` and ``prompted`` through a real OpenAI-compatible server (``llama_cpp.server``).

The server runs the embedded GGUF on 127.0.0.1; the roles reach it through litellm as
``hosted_vllm/smollm2`` (which sends ``max_tokens``, unlike ``openai/``). The server is always
stopped, whatever the test does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import build_assignment
from tests.support.llama_server import ALIAS, llama_server

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real llama_cpp.server on the embedded GGUF; yields its ``/v1`` URL."""
    with llama_server(tmp_path_factory.mktemp("nlt-server")) as base:
        yield base


@pytest.mark.parametrize("strategy", ["nlt", "prompted"])
def test_strategy_over_http(server: str, data_dir: Path, strategy: str) -> None:
    bench = get_benchmark("nlt-alex")
    options = EvalOptions(data_dir=data_dir, limit=1)
    program = bench.make_program(strategy, options)
    program.apply_assignment(
        build_assignment(
            program.role_names,
            default_model=f"hosted_vllm/{ALIAS}",
            api_base=server,
            sampling_specs=("temperature=0", "max_tokens=24"),
        )
    )
    [record] = run_episode(bench, program, bench.episodes(options)[0])
    assert record.failure is None or not record.failure.model_failed
    assert record.input_tokens > 200 and record.output_tokens > 0 and record.lm_calls >= 1
    assert record.success in (0.0, 1.0)
