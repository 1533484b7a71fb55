"""Run the app with uvicorn: in the foreground (the CLI) or in a thread (tests, benchmarks).

Only a bound socket is handed to uvicorn, so ``serving_in_thread`` can take a free port with
no race, and the URL it yields is live before the block starts.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

__all__ = ["run_server", "serving_in_thread"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
_STARTUP_SECONDS = 30.0


def _config(app: FastAPI, host: str, port: int) -> uvicorn.Config:
    # NOTE: log_config=None keeps the logging the CLI set up (-v/-q); the access log goes
    # through it at INFO.
    return uvicorn.Config(app, host=host, port=port, log_config=None, timeout_graceful_shutdown=5)


def run_server(app: FastAPI, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve ``app`` until interrupted (Ctrl-C or SIGTERM)."""
    uvicorn.Server(_config(app, host, port)).run()


@contextmanager
def serving_in_thread(app: FastAPI, host: str = DEFAULT_HOST) -> Iterator[str]:
    """Serve ``app`` on a free port in a background thread; yield its base URL (``.../v1``).

    The server stops (after its running requests) when the block ends.
    """
    # NOTE: IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY only on sockets whose
    # proto says TCP, and without it every answer waited ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        _wait_started(server, thread)
        yield f"http://{host}:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    deadline = time.monotonic() + _STARTUP_SECONDS
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server thread stopped while starting")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start within {_STARTUP_SECONDS:g} s")
        time.sleep(0.01)
