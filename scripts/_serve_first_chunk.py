"""``bench_serve.py --first-chunk``: how soon a streamed answer starts, on a real model.

``freyr serve`` runs the model (default the embedded 0.5B) in its own process. Three kinds of
request, each sent ``--repeats`` times streamed and as many times not streamed, after one
warm-up of each (model load, prefix cache):

* ``chat reply``: no tools; the chat role's reply streams as the model writes it;
* ``tool call``: a weather question with the weather tool; the call goes out once made;
* ``summary``: the same question with the call's result; the plan is made again, then the
  summary's reply streams.

For each: the first chunk that carries content or a tool call (the role-only chunk does not
count), the last one (``[DONE]``), and the whole non-streamed answer, in ms (medians).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _bench import running_server, save_json

from freyr_dspy.testing import free_port

#: The OpenAI SDK documentation's example tool (with a ``city`` tool and "Current weather in a
#: city." the 0.5B answered in words: the "tool call" row then timed no call).
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "City and country e.g. Bogotá, Colombia",
                }
            },
            "required": ["location"],
        },
    },
}
ASK = {"role": "user", "content": "What is the weather in Paris today?"}
CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Paris, France"}'},
        }
    ],
}
RESULT = {
    "role": "tool",
    "tool_call_id": "call_1",
    "content": "14 degrees Celsius, cloudy, light wind",
}
REQUESTS: dict[str, dict[str, Any]] = {
    "chat reply": {
        "messages": [{"role": "user", "content": "Hello! Tell me a short fun fact about the sea."}]
    },
    "tool call": {"messages": [ASK], "tools": [WEATHER]},
    "summary": {"messages": [ASK, CALLED, RESULT], "tools": [WEATHER]},
}


def timed_stream(client: httpx.Client, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """Send ``body`` streamed; the ms to the first content or call chunk and to the end."""
    started = time.perf_counter()
    first, text, calls = None, "", 0
    with client.stream("POST", url, json={**body, "stream": True}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line.removeprefix("data: ")).get("choices", []):
                delta = choice.get("delta", {})
                if (delta.get("content") or delta.get("tool_calls")) and first is None:
                    first = time.perf_counter() - started
                text += delta.get("content") or ""
                calls += sum(1 for c in delta.get("tool_calls") or [] if c.get("id"))
    full = time.perf_counter() - started
    return {
        "first_ms": 1000 * (first or full),
        "full_ms": 1000 * full,
        "text": text,
        "calls": calls,
    }


def timed_whole(client: httpx.Client, url: str, body: dict[str, Any]) -> float:
    """Send ``body`` not streamed; the ms to the whole answer."""
    started = time.perf_counter()
    client.post(url, json=body).raise_for_status()
    return 1000 * (time.perf_counter() - started)


def measure(base: str, model: str, repeats: int) -> dict[str, Any]:
    url = f"{base}/chat/completions"
    rows: dict[str, Any] = {}
    with httpx.Client(timeout=600) as client:
        for kind, request in REQUESTS.items():
            body = {"model": model, "temperature": 0, **request}
            timed_stream(client, url, body)  # warm-up: load, prefix cache
            streamed = [timed_stream(client, url, body) for _ in range(repeats)]
            whole = [timed_whole(client, url, body) for _ in range(repeats)]
            rows[kind] = {
                "first_chunk_ms": round(statistics.median(s["first_ms"] for s in streamed)),
                "full_reply_ms": round(statistics.median(s["full_ms"] for s in streamed)),
                "not_streamed_ms": round(statistics.median(whole)),
                "answer": streamed[-1]["text"][:200] or f"{streamed[-1]['calls']} tool call(s)",
            }
    return rows


def run(model: str, repeats: int, out: Path) -> int:
    port = free_port()
    command = [sys.executable, "-m", "freyr_dspy", "serve", "--model", model, "--port", str(port)]
    log = out.with_suffix(".server.log")
    health = f"http://127.0.0.1:{port}/health"
    with running_server(command, log, health, label="freyr serve", startup_seconds=120):
        rows = measure(f"http://127.0.0.1:{port}/v1", model, repeats)
    print("| request | first chunk ms | full reply ms | not streamed ms | answer |")
    print("|---|---|---|---|---|")
    for kind, row in rows.items():
        cells = [row["first_chunk_ms"], row["full_reply_ms"], row["not_streamed_ms"]]
        print(f"| {kind} | {' | '.join(map(str, cells))} | {row['answer']!r} |")
    report = {
        "config": {"model": model, "repeats": repeats, "mode": "first-chunk"},
        "rows": rows,
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    save_json(out, report)
    print(f"wrote {out}")
    return 0
