"""``bench_serve.py --scale-out``: one model server, one then two ``freyr serve`` processes.

The model runs once, in llama-cpp-python's own server (``python -m llama_cpp.server`` on the
embedded model's GGUF); each ``freyr serve`` reaches it as ``--model openai/ALIAS --api-base
URL`` with ``--concurrency`` requests at once. ``--clients`` clients send the request mix for
``--seconds`` per phase, spread evenly over the processes: first one process, then two. An
answer is completed (a chat completion with a tool call or a reply), or failed (an OpenAI
error object: the model failed the request), or malformed (anything else); a request with no
answer is lost. Lost and malformed must be 0. Reported per phase: completed, requests per
minute, lost, malformed, failed, and latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _bench import markdown_table, running_server, save_json
from _serve_first_chunk import ASK, WEATHER
from openai.types.chat import ChatCompletion

from freyr_dspy.backends import model_path
from freyr_dspy.testing import free_port

ALIAS = "model"
MIX = [
    {"messages": [ASK], "tools": [WEATHER]},
    {"messages": [{"role": "user", "content": "Hello! What can you do?"}]},
]


@dataclass
class Phase:
    """What one phase's clients saw."""

    processes: int
    seconds: float = 0.0
    latency_ms: list[float] = field(default_factory=list)
    lost: int = 0
    malformed: int = 0
    failed: int = 0
    #: Answers (completed or failed) each process gave, by its URL.
    answers: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latency_ms)
        done = len(ordered)
        return {
            "processes": self.processes,
            "seconds": round(self.seconds, 1),
            "completed": done,
            "per_minute": round(60 * done / self.seconds, 1) if self.seconds else 0.0,
            "lost": self.lost,
            "malformed": self.malformed,
            "failed": self.failed,
            "answers_per_process": list(self.answers.values()),
            "latency_ms_p50": round(ordered[done // 2]) if done else None,
            "latency_ms_max": round(ordered[-1]) if done else None,
            "problems": self.samples[:5],
        }


@contextlib.contextmanager
def model_server(model: str, log_dir: Path) -> Iterator[str]:
    """``llama_cpp.server`` on the model's GGUF as ``ALIAS``; yield its ``/v1`` URL."""
    port = free_port()
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(model_path(model))),
        *("--model_alias", ALIAS, "--n_ctx", "8192", "--port", str(port)),
    ]
    base = f"http://127.0.0.1:{port}/v1"
    log = log_dir / "model_server.log"
    with running_server(
        command, log, f"{base}/models", label="llama_cpp.server", startup_seconds=120
    ):
        yield base


@contextlib.contextmanager
def freyr_servers(
    count: int, model_base: str, concurrency: int, log_dir: Path
) -> Iterator[list[str]]:
    """``count`` ``freyr serve`` processes on the one model server; yield their URLs."""
    with contextlib.ExitStack() as stack:
        bases = []
        for number in range(count):
            port = free_port()
            command = [
                *(sys.executable, "-m", "freyr_dspy", "serve", "--model", f"openai/{ALIAS}"),
                *("--api-base", model_base, "--strategy", "freyr"),
                *("--concurrency", str(concurrency), "--max-queue", "64", "--port", str(port)),
            ]
            log = log_dir / f"freyr_serve_{count}_{number}.log"
            health = f"http://127.0.0.1:{port}/health"
            stack.enter_context(
                running_server(command, log, health, label="freyr serve", startup_seconds=120)
            )
            bases.append(f"http://127.0.0.1:{port}/v1")
        yield bases


async def client_loop(
    http: httpx.AsyncClient, url: str, phase: Phase, until: float, start: int
) -> None:
    """Send the mix again and again (from ``start`` in it) until the phase ends."""
    sent = start
    while time.perf_counter() < until:
        body = {"model": f"openai/{ALIAS}", "temperature": 0, **MIX[sent % len(MIX)]}
        sent += 1
        started = time.perf_counter()
        try:
            response = await http.post(url, json=body)
        except httpx.HTTPError as exc:
            phase.lost += 1
            phase.samples.append(f"no answer: {type(exc).__name__}: {exc}")
            continue
        kind = kind_of(response)
        if kind != "malformed":
            phase.answers[url] = phase.answers.get(url, 0) + 1
        if kind != "completed":
            setattr(phase, kind, getattr(phase, kind) + 1)
            phase.samples.append(f"{kind} {response.status_code}: {response.text[:300]}")
            continue
        phase.latency_ms.append(1000 * (time.perf_counter() - started))


def kind_of(response: httpx.Response) -> str:
    """``completed`` (a tool call or a reply), ``failed`` (an OpenAI error) or ``malformed``."""
    try:
        body = response.json()
        if response.status_code != 200:
            return "failed" if {"message", "type"} <= set(body["error"]) else "malformed"
        message = ChatCompletion.model_validate(body).choices[0].message
    except (ValueError, KeyError, TypeError):
        return "malformed"
    return "completed" if message.tool_calls or message.content else "malformed"


async def load(bases: list[str], clients: int, seconds: float) -> Phase:
    phase = Phase(len(bases))
    async with httpx.AsyncClient(timeout=600) as http:
        started = time.perf_counter()
        until = started + seconds
        loops = [
            client_loop(http, f"{bases[n % len(bases)]}/chat/completions", phase, until, n)
            for n in range(clients)
        ]
        await asyncio.gather(*loops)
        phase.seconds = time.perf_counter() - started
    return phase


def run(
    model: str,
    clients: int,
    seconds: float,
    concurrency: int,
    out: Path,
    model_base: str | None = None,
) -> int:
    """Both phases; ``model_base``: a model server already running (else one is started)."""
    log_dir = out.with_suffix("")
    phases = {}
    with contextlib.ExitStack() as stack:
        if model_base is None:
            model_base = stack.enter_context(model_server(model, log_dir))
        for count in (1, 2):
            with freyr_servers(count, model_base, concurrency, log_dir) as bases:
                asyncio.run(load(bases, 1, min(seconds, 10.0)))  # warm-up, not counted
                phases[count] = asyncio.run(load(bases, clients, seconds)).summary()
    columns = ["freyr serve processes", "completed", "per minute", "lost", "malformed"]
    columns += ["failed", "p50 ms", "max ms"]
    keys = ("processes", "completed", "per_minute", "lost", "malformed", "failed")
    keys += ("latency_ms_p50", "latency_ms_max")
    rows = [[row[key] for key in keys] for row in phases.values()]
    print("\n".join(markdown_table(columns, rows)))
    report = {
        "config": {
            "mode": "scale-out",
            "model": model,
            "clients": clients,
            "seconds": seconds,
            "concurrency": concurrency,
            "model_server": model_base,
        },
        "phases": list(phases.values()),
        "none_lost": all(p["lost"] == 0 and p["malformed"] == 0 for p in phases.values()),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    save_json(out, report)
    print(f"wrote {out}")
    return 0 if report["none_lost"] else 1
