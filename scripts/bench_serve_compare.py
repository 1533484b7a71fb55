"""Side by side: llama-cpp-python's own OpenAI server and ``freyr serve``, same GGUF, same requests.

Each request of our suite (``trainsets/calls/test.jsonl`` over ``tools.json``) is sent, with
its toolbox's OpenAI tool dicts, through the ``openai`` SDK to each contestant in turn:

* ``python -m llama_cpp.server --model <gguf> --chat_format chatml-function-calling`` (the
  usual way to give a local GGUF tool calling; ``--chat-format`` picks another handler);
* ``freyr serve`` on the same model, once per ``--program`` artifact and ``--strategy``.

Servers run one at a time on 127.0.0.1 (they would share the CPU otherwise), greedy
(``temperature=0``, ``seed=0``). Per contestant: the share of requests answered exactly
(the suite's exact-call check: right tools, required arguments, values; no call where none
fits), the share of requests needing calls that got ``tool_calls`` at all, the share of
``tool_calls`` answers whose every call names an offered tool with arguments that are a JSON
object valid against its schema, answers that wrote a call into ``content`` instead, errors,
and seconds per request.

Usage:
    python scripts/bench_serve_compare.py [--model embedded/qwen2.5-coder-0.5b | --gguf PATH]
        [--program compiled/calls-qwen0.5b.json] [--strategy freyr] [--limit N]
        [--out runs/bench_serve_compare.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import running_server
from openai import APIError, OpenAI

from freyr_dspy.datasets import CallExample, check_calls, load_examples, toolbox_of
from freyr_dspy.errors import ToolError
from freyr_dspy.settings import FAST_MODEL
from freyr_dspy.testing import free_port
from freyr_dspy.tools import Toolbox

STARTUP_SECONDS = 300.0  # a first run assembles the embedded model from its packages
REQUEST_SECONDS = 600.0
N_CTX = 8192
MAX_TOKENS = 512


@dataclass(frozen=True)
class Contestant:
    """One server to start: its label, the command, and the model name requests use."""

    label: str
    command: tuple[str, ...]
    model: str


def add_contestant_options(parser: argparse.ArgumentParser) -> None:
    """The options ``contestants`` reads: the model, the freyr programs, llama.cpp's server."""
    parser.add_argument("--model", default=FAST_MODEL, help="embedded model id")
    parser.add_argument("--gguf", type=Path, help="a GGUF file instead of --model")
    parser.add_argument("--program", action="append", default=[], help="freyr artifact")
    parser.add_argument(
        "--strategy", action="append", default=None, help="freyr strategy (default: freyr)"
    )
    parser.add_argument("--freyr-option", action="append", default=[], help="extra serve flag")
    parser.add_argument("--chat-format", default="chatml-function-calling")
    parser.add_argument("--skip-llama-server", action="store_true")


def contestants(args: argparse.Namespace, gguf: Path, model_id: str) -> list[Contestant]:
    """llama.cpp's server (unless skipped), then ``freyr serve`` per program and strategy."""
    found = []
    if not args.skip_llama_server:
        found.append(
            Contestant(
                f"llama_cpp.server ({args.chat_format})",
                (
                    *(sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)),
                    *("--model_alias", "local", "--chat_format", args.chat_format),
                    *("--n_ctx", str(N_CTX), "--n_threads", str(os.cpu_count() or 1)),
                ),
                "local",
            )
        )
    freyr = (sys.executable, "-m", "freyr_dspy", "serve")
    for program in args.program:
        found.append(
            Contestant(
                f"freyr serve --program {program}",
                (*freyr, "--program", program, "--model", model_id, *args.freyr_option),
                Path(program).stem,
            )
        )
    for strategy in args.strategy if args.strategy is not None else ["freyr"]:
        found.append(
            Contestant(
                f"freyr serve --strategy {strategy}",
                (*freyr, "--strategy", strategy, "--model", model_id, *args.freyr_option),
                model_id,
            )
        )
    return found


# --------------------------------------------------------------------------- requests


def requests(examples: list[CallExample], raw: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The chat request of each example: its earlier turns and state, then its message."""
    built = []
    for example in examples:
        tools = example.tools if example.tools is not None else _raw_tools(example, raw)
        messages: list[dict[str, Any]] = []
        if example.state is not None:
            state = json.dumps(example.state, ensure_ascii=False)
            messages.append({"role": "system", "content": f"Current state: {state}"})
        turns = example.conversation_turns()
        if isinstance(turns, str):
            if turns.strip():
                messages.append({"role": "system", "content": f"Earlier turns:\n{turns}"})
        else:
            messages += turns
        messages.append({"role": "user", "content": example.message})
        # NOTE: tool_choice is sent although "auto" is OpenAI's default: llama_cpp.server's
        # function-calling handler drops the tools when it is left out.
        built.append({"messages": messages, "tools": tools, "tool_choice": "auto"})
    return built


def _raw_tools(example: CallExample, raw: dict[str, list[Any]]) -> list[Any]:
    if example.toolbox is not None:
        return raw[example.toolbox]
    [only] = raw.values()
    return only


# --------------------------------------------------------------------------- scoring


def score(example: CallExample, toolbox: Toolbox, answer: dict[str, Any]) -> dict[str, Any]:
    """Score one answer (a chat completion as JSON): exact, valid tool calls, calls as text."""
    message = answer["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    made, valid = [], bool(calls)
    for call in calls:
        name, arguments = _parsed(call)
        made.append((name, arguments if isinstance(arguments, dict) else {}))
        valid = valid and _valid(toolbox, name, arguments)
    check = check_calls(example.calls or [], made, toolbox, ordered=example.ordered)
    content = message.get("content") or ""
    return {
        "id": example.id,
        "category": example.kind,
        "expects_calls": bool(example.calls),
        "tool_calls": len(calls),
        "valid_tool_calls": valid,
        "exact": check.ok,
        "problems": list(check.problems),
        "calls_in_content": not calls and _looks_like_a_call(content, toolbox),
        "made": [[name, arguments] for name, arguments in made],
    }


def _parsed(call: dict[str, Any]) -> tuple[str, Any]:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        arguments = None
    return str(function.get("name", "")), arguments


def _valid(toolbox: Toolbox, name: str, arguments: Any) -> bool:
    tool = toolbox.resolve(name)
    if tool is None or tool.name != name or not isinstance(arguments, dict):
        return False
    try:
        tool.validate_arguments(arguments)
    except ToolError:
        return False
    return True


def _looks_like_a_call(content: str, toolbox: Toolbox) -> bool:
    """A reply in words that names an offered tool next to a JSON object: a call as text."""
    return "{" in content and any(re.search(re.escape(n), content) for n in toolbox.names)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One contestant's figures over its scored rows."""
    answered = [r for r in rows if "error" not in r]
    with_calls = [r for r in answered if r["tool_calls"]]
    expecting = [r for r in rows if r["expects_calls"]]
    seconds = [r["seconds"] for r in answered]
    categories = sorted({r["category"] for r in rows})
    return {
        "requests": len(rows),
        "exact_pct": _pct(sum(r.get("exact", False) for r in rows), len(rows)),
        "answered_with_tool_calls_pct": _pct(
            sum(1 for r in expecting if r.get("tool_calls")), len(expecting)
        ),
        "valid_tool_calls_pct": _pct(
            sum(r["valid_tool_calls"] for r in with_calls), len(with_calls)
        ),
        "calls_in_content": sum(r.get("calls_in_content", False) for r in rows),
        "errors": len(rows) - len(answered),
        "seconds_mean": round(statistics.fmean(seconds), 2) if seconds else None,
        "seconds_median": round(statistics.median(seconds), 2) if seconds else None,
        "exact_pct_by_category": {
            c: _pct(
                sum(r.get("exact", False) for r in rows if r["category"] == c),
                sum(1 for r in rows if r["category"] == c),
            )
            for c in categories
        },
    }


def _pct(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def started(contestant: Contestant, log: Path) -> Iterator[str]:
    """Start a contestant's server on a free port; yield its ``/v1`` URL; always stop it."""
    port = free_port()
    command = [*contestant.command, "--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}/v1"
    with running_server(
        command, log, f"{base}/models", label=contestant.label, startup_seconds=STARTUP_SECONDS
    ):
        yield base


def run_contestant(
    contestant: Contestant,
    examples: list[CallExample],
    bodies: list[dict[str, Any]],
    boxes: list[Toolbox],
    log: Path,
) -> list[dict[str, Any]]:
    rows = []
    with started(contestant, log) as base:
        client = OpenAI(base_url=base, api_key="-", max_retries=0, timeout=REQUEST_SECONDS)
        for number, (example, body, box) in enumerate(zip(examples, bodies, boxes, strict=True)):
            began = time.perf_counter()
            try:
                completion = client.chat.completions.create(
                    model=contestant.model,
                    temperature=0,
                    seed=0,
                    max_tokens=MAX_TOKENS,
                    **body,
                )
            except APIError as exc:
                rows.append(_error_row(example, exc))
                continue
            row = score(example, box, completion.model_dump())
            rows.append(row | {"seconds": round(time.perf_counter() - began, 3)})
            mark = "ok" if row["exact"] else "--"
            print(f"  [{number + 1}/{len(examples)}] {mark} {example.id}", file=sys.stderr)
    return rows


def _error_row(example: CallExample, exc: APIError) -> dict[str, Any]:
    return {
        "id": example.id,
        "category": example.kind,
        "expects_calls": bool(example.calls),
        "error": " ".join(str(exc).split())[:300],
    }


def print_table(summaries: dict[str, dict[str, Any]]) -> None:
    columns = [
        ("exact %", "exact_pct"),
        ("tool_calls when needed %", "answered_with_tool_calls_pct"),
        ("valid tool_calls %", "valid_tool_calls_pct"),
        ("calls in content", "calls_in_content"),
        ("errors", "errors"),
        ("s/request (mean)", "seconds_mean"),
        ("s/request (median)", "seconds_median"),
    ]
    print("| contestant | " + " | ".join(title for title, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for label, summary in summaries.items():
        print(f"| {label} | " + " | ".join(str(summary[key]) for _, key in columns) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_contestant_options(parser)
    parser.add_argument("--tools", type=Path, default=Path("trainsets/calls/tools.json"))
    parser.add_argument("--examples", type=Path, default=Path("trainsets/calls/test.jsonl"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/bench_serve_compare.json"))
    args = parser.parse_args(argv)
    gguf, model_id = _model(args)
    examples = load_examples(args.examples)[: args.limit]
    raw = json.loads(args.tools.read_text(encoding="utf-8"))
    raw = raw if isinstance(raw, dict) else {"default": raw}
    boxes = {name: Toolbox.from_openai(tools) for name, tools in raw.items()}
    per_row = [toolbox_of(example, boxes) for example in examples]
    bodies = requests(examples, raw)
    results, summaries = {}, {}
    for index, contestant in enumerate(contestants(args, gguf, model_id)):
        print(f"{contestant.label}: {len(examples)} requests", file=sys.stderr)
        log = args.out.with_name(f"{args.out.stem}.server{index}.log")
        rows = run_contestant(contestant, examples, bodies, per_row, log)
        results[contestant.label] = rows
        summaries[contestant.label] = summarise(rows)
    print_table(summaries)
    report = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "model": model_id,
        "gguf": str(gguf),
        "summaries": summaries,
        "rows": results,
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


def _model(args: argparse.Namespace) -> tuple[Path, str]:
    """The GGUF both servers load, and the id ``freyr serve`` knows it by."""
    if args.gguf is not None:
        return args.gguf, f"gguf:{args.gguf.resolve()}"
    if args.model.startswith("fake/"):  # the script's own smoke test: no GGUF at all
        return Path("-"), args.model
    from freyr_dspy.backends import model_path

    return model_path(args.model), args.model


if __name__ == "__main__":
    raise SystemExit(main())
