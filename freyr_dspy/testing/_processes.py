"""Local server processes for tests and benchmark scripts: a free port, and a sure stop.

Tests and ``scripts/`` start real servers on 127.0.0.1 (llama.cpp's, ``freyr serve``, an MCP
server). Each must be stopped however its test ends, or the next run finds the port taken
and a model still loaded.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["free_port", "stopped_at_exit"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def stopped_at_exit(process: subprocess.Popen[bytes], grace: float = 10.0) -> Iterator[None]:
    """Stop ``process`` when the block ends: SIGTERM, then SIGKILL after ``grace`` seconds."""
    try:
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
