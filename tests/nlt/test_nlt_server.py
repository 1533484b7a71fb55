"""``nlt`` and ``prompted`` through a real OpenAI-compatible server (``llama_cpp.server``).

The server runs the embedded GGUF on 127.0.0.1; the roles reach it through litellm as
``hosted_vllm/smollm2`` (which sends ``max_tokens``, unlike ``openai/``). The server is always
stopped, whatever the test does.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from freyr_dspy.assignment import build_assignment
from freyr_dspy.backends import model_path
from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.evaluation import run_episode

pytestmark = pytest.mark.server

ALIAS = "smollm2"
STARTUP_SECONDS = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {log.read_text(encoding='utf-8')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                json.load(response)
                return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"llama_cpp.server did not answer within {STARTUP_SECONDS} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on a free port; yield its ``/v1`` URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("nlt-server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path("embedded/smollm2-135m")),
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_up(base, process, log)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
    assert "model failed" not in (record.diagnostics["failure"] or "")
    assert record.input_tokens > 200 and record.output_tokens > 0 and record.lm_calls >= 1
    assert record.success in (0.0, 1.0)
