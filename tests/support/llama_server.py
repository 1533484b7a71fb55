"""Start a real ``python -m llama_cpp.server`` on 127.0.0.1 for the HTTP-path tests."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from freyr_dspy.backends import model_path
from freyr_dspy.testing import free_port, stopped_at_exit

ALIAS = "smollm2"
STARTUP_SECONDS = 60


def served_models(base: str, process: subprocess.Popen[bytes], log: Path) -> list[str]:
    """Wait until the server answers ``/models``; fail the test with its log if it dies."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {log.read_text(encoding='utf-8')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as response:
                return [m["id"] for m in json.load(response)["data"]]
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"llama_cpp.server did not answer in {STARTUP_SECONDS} s")


@contextmanager
def llama_server(log_dir: Path, n_ctx: int = 4096) -> Iterator[str]:
    """Serve the embedded GGUF as ``ALIAS``; yield its ``/v1`` URL; always stop it."""
    port = free_port()
    log = log_dir / "server.log"
    command = [
        *(sys.executable, "-m", "llama_cpp.server"),
        *("--model", str(model_path("embedded/smollm2-135m")), "--model_alias", ALIAS),
        *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)),
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    with stopped_at_exit(process):
        assert served_models(base, process, log) == [ALIAS]
        yield base
