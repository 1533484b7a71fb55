"""Load test of ``freyr serve``: concurrent clients for a bounded time, on an instant fake model.

A server is started on 127.0.0.1 with the ``fake/rules`` model (no weights; the program's
roles still run through DSPy's adapter, parsing and freyr's strategy), then two phases run:
one client alone, then ``--clients`` clients at once, each sending the same weather request
again and again until the phase's time is up. Every answer is checked: a 200 must be a chat
completion whose tool call is ``get_weather({"location": "Oslo"})``; a 503 must carry
``Retry-After``. A request with no answer is lost; any other answer is malformed. Both must
be 0, and 503s may only happen when more clients than ``1 + --max-queue`` wait at once.

The server's own overhead per request is measured two ways. Seen from the client: its
latency minus the time the request waited for the worker and the time the program ran (the
server reports both, in ``x-freyr-queue-ms``/``x-freyr-program-ms``), i.e. HTTP, JSON,
checking the request and building the answer, plus the client's own share. Measured in the
server: ``x-freyr-overhead-ms``, its handler's time minus the wait and the program. Target: at
most 5 ms, the median of the first with one client and of the second with the crowd (with 32
clients on a small machine, the clients' own event loop competes with the server for the CPU,
and a request may sit in the client before it is sent: the client-side figure then measures
the client).

Two more modes run a real model (wrap them in ``flock /tmp/freyr-model.lock`` on a shared
machine): ``--first-chunk`` measures how soon a streamed answer starts against the whole
answer (``_serve_first_chunk``), and ``--scale-out`` runs one model server behind one, then
two ``freyr serve`` processes under load (``_serve_scale_out``).

Usage: python scripts/bench_serve.py [--clients 32] [--seconds 20] [--max-queue 64]
                                     [--in-process] [--out runs/bench_serve.json]
       python scripts/bench_serve.py --first-chunk [--model ID] [--repeats 3] [--out ...]
       python scripts/bench_serve.py --scale-out [--model ID] [--clients 4] [--seconds 60]
                                     [--concurrency 2] [--model-server URL] [--out ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

import _serve_first_chunk
import _serve_scale_out
import httpx
from _bench import running_server
from openai.types.chat import ChatCompletion

from freyr_dspy.settings import FAST_MODEL
from freyr_dspy.testing import free_port

MODEL = "fake/rules"
TARGET_MS = 5.0
STARTUP_SECONDS = 60.0
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "The city."}},
            "required": ["location"],
        },
    },
}
REQUEST = {
    "model": MODEL,
    "messages": [{"role": "user", "content": "Please get the weather in location=Oslo"}],
    "tools": [WEATHER],
}
EXPECTED = ("get_weather", {"location": "Oslo"})


@dataclass
class Phase:
    """What one phase's clients saw."""

    name: str
    clients: int
    seconds: float = 0.0
    latency_ms: list[float] = field(default_factory=list)
    overhead_ms: list[float] = field(default_factory=list)
    server_overhead_ms: list[float] = field(default_factory=list)
    program_ms: list[float] = field(default_factory=list)
    refused: int = 0
    lost: int = 0
    malformed: int = 0
    samples: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        if len(self.samples) < 5:
            self.samples.append(text[:300])

    def summary(self) -> dict[str, Any]:
        done = len(self.latency_ms)
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 2),
            "completed": done,
            "per_second": round(done / self.seconds, 1) if self.seconds else 0.0,
            "lost": self.lost,
            "malformed": self.malformed,
            "refused_503": self.refused,
            "latency_ms_p50": _percentile(self.latency_ms, 50),
            "latency_ms_p99": _percentile(self.latency_ms, 99),
            "program_ms_p50": _percentile(self.program_ms, 50),
            "overhead_ms_p50": _percentile(self.overhead_ms, 50),
            "overhead_ms_p99": _percentile(self.overhead_ms, 99),
            "server_overhead_ms_p50": _percentile(self.server_overhead_ms, 50),
            "server_overhead_ms_p99": _percentile(self.server_overhead_ms, 99),
            "problems": self.samples,
        }


def _percentile(values: list[float], pct: int) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))
    return round(ordered[index], 2)


# --------------------------------------------------------------------------- the server


@contextlib.contextmanager
def subprocess_server(max_queue: int, log: Path) -> Iterator[str]:
    """``freyr serve`` in its own process (the realistic case); yield its ``/v1`` URL."""
    port = free_port()
    command = [
        *(sys.executable, "-m", "freyr_dspy", "serve", "--model", MODEL),
        *("--port", str(port), "--max-queue", str(max_queue)),
    ]
    health = f"http://127.0.0.1:{port}/health"
    with running_server(command, log, health, label="freyr serve", startup_seconds=STARTUP_SECONDS):
        yield f"http://127.0.0.1:{port}/v1"


@contextlib.contextmanager
def thread_server(max_queue: int) -> Iterator[str]:
    """The same app in a thread of this process (quick; the clients share its CPU and GIL)."""
    from freyr_dspy.program import FreyrProgram
    from freyr_dspy.serve import (
        ServedProgram,
        ServedPrograms,
        ServeOptions,
        create_app,
        serving_in_thread,
    )
    from freyr_dspy.tools import Toolbox

    # as `freyr serve --model MODEL --strategy freyr`: the request's tools become the toolbox
    program = FreyrProgram.for_model(MODEL, toolbox=Toolbox([]), strategy="freyr")
    served = [ServedProgram(MODEL, program)]
    app = create_app(ServedPrograms(served), ServeOptions(max_queue=max_queue))
    with serving_in_thread(app) as base:
        yield base


# --------------------------------------------------------------------------- the clients


def check(response: httpx.Response, phase: Phase, latency_ms: float) -> None:
    """Count one answer as completed, refused, or malformed."""
    if response.status_code == 503:
        if response.headers.get("retry-after", "").isdigit():
            phase.refused += 1
        else:
            phase.malformed += 1
            phase.problem(f"503 without Retry-After: {response.text}")
        return
    try:
        completion = ChatCompletion.model_validate(response.json())
        [call] = completion.choices[0].message.tool_calls or []
        made = (call.function.name, json.loads(call.function.arguments))  # type: ignore[union-attr]
        queue = float(response.headers["x-freyr-queue-ms"])
        program = float(response.headers["x-freyr-program-ms"])
        own = float(response.headers["x-freyr-overhead-ms"])
    except (ValueError, KeyError, TypeError) as exc:
        phase.malformed += 1
        phase.problem(f"{response.status_code} {exc}: {response.text}")
        return
    if response.status_code != 200 or made != EXPECTED:
        phase.malformed += 1
        phase.problem(f"{response.status_code}: {response.text}")
        return
    phase.latency_ms.append(latency_ms)
    phase.program_ms.append(program)
    phase.overhead_ms.append(latency_ms - queue - program)
    phase.server_overhead_ms.append(own)


async def client_loop(http: httpx.AsyncClient, url: str, phase: Phase, until: float) -> None:
    while time.perf_counter() < until:
        started = time.perf_counter()
        try:
            response = await http.post(url, json=REQUEST)
        except httpx.HTTPError as exc:
            phase.lost += 1
            phase.problem(f"no answer: {type(exc).__name__}: {exc}")
            continue
        check(response, phase, 1000 * (time.perf_counter() - started))
        if response.status_code == 503:
            await asyncio.sleep(0.02)  # keep the pressure on: the point is to fill the queue


async def run_phase(base: str, name: str, clients: int, seconds: float) -> Phase:
    phase = Phase(name, clients)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as http:
        started = time.perf_counter()
        until = started + seconds
        url = f"{base}/chat/completions"
        await asyncio.gather(*(client_loop(http, url, phase, until) for _ in range(clients)))
        phase.seconds = time.perf_counter() - started
    return phase


# --------------------------------------------------------------------------- report


def verdict(phases: dict[str, dict[str, Any]], clients: int, max_queue: int) -> dict[str, Any]:
    alone, crowd = phases["one client"], phases[f"{clients} clients"]
    refusals_allowed = clients > max_queue + 1
    seen, measured = alone["overhead_ms_p50"], crowd["server_overhead_ms_p50"]
    return {
        "none_lost_or_malformed": all(
            p["lost"] == 0 and p["malformed"] == 0 for p in phases.values()
        ),
        "refusals_only_past_the_queue": refusals_allowed or crowd["refused_503"] == 0,
        "overhead_target_ms": TARGET_MS,
        "overhead_target_met": None not in (seen, measured) and max(seen, measured) <= TARGET_MS,
    }


def print_table(phases: dict[str, dict[str, Any]]) -> None:
    columns = [
        ("phase", None),
        ("completed", "completed"),
        ("req/s", "per_second"),
        ("lost", "lost"),
        ("malformed", "malformed"),
        ("503s", "refused_503"),
        ("p50 ms", "latency_ms_p50"),
        ("p99 ms", "latency_ms_p99"),
        ("program p50", "program_ms_p50"),
        ("overhead p50", "overhead_ms_p50"),
        ("overhead p99", "overhead_ms_p99"),
        ("in-server p50", "server_overhead_ms_p50"),
        ("in-server p99", "server_overhead_ms_p99"),
    ]
    print("| " + " | ".join(title for title, _ in columns) + " |")
    print("|" + "---|" * len(columns))
    for name, row in phases.items():
        cells = [name] + [str(row[key]) for _, key in columns[1:] if key]
        print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the busy phase")
    parser.add_argument("--max-queue", type=int, default=64)
    parser.add_argument("--in-process", action="store_true", help="serve from a thread")
    parser.add_argument("--out", type=Path, default=Path("runs/bench_serve.json"))
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--first-chunk", action="store_true", help="streaming latency, real model")
    modes.add_argument("--scale-out", action="store_true", help="one vs two processes, real model")
    parser.add_argument("--model", default=FAST_MODEL, help="the real model of those modes")
    parser.add_argument("--repeats", type=int, default=3, help="--first-chunk: runs per request")
    parser.add_argument("--concurrency", type=int, default=2, help="--scale-out: per process")
    parser.add_argument(
        "--model-server", default=None, help="--scale-out: use this /v1 URL, start none"
    )
    args = parser.parse_args(argv)
    if args.first_chunk:
        return _serve_first_chunk.run(args.model, args.repeats, args.out)
    if args.scale_out:
        return _serve_scale_out.run(
            args.model, args.clients, args.seconds, args.concurrency, args.out, args.model_server
        )
    log = args.out.with_suffix(".server.log")
    server = (
        thread_server(args.max_queue) if args.in_process else subprocess_server(args.max_queue, log)
    )
    with server as base:
        asyncio.run(run_phase(base, "warm-up", 1, 1.0))  # imports, first-call caches
        alone = asyncio.run(run_phase(base, "one client", 1, max(1.0, args.seconds / 4)))
        crowd = asyncio.run(run_phase(base, "crowd", args.clients, args.seconds))
    phases = {"one client": alone.summary(), f"{args.clients} clients": crowd.summary()}
    report = {
        "config": vars(args) | {"out": str(args.out), "model": MODEL},
        "phases": phases,
        "verdict": verdict(phases, args.clients, args.max_queue),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    print_table(phases)
    print(json.dumps(report["verdict"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    ok = (
        report["verdict"]["none_lost_or_malformed"]
        and report["verdict"]["refusals_only_past_the_queue"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
