"""Conversations that act on state, end to end: in Python, and through freyr serve with clients.

Each contestant holds every conversation of the file with a live app (the suite's apps,
``trainsets/conversations/apps.py``): a turn is right when its calls are (reading calls
free), a conversation when every turn is and the app ends in the expected state
(``freyr_dspy.datasets.check_turn``). Contestants:

* ``python:LABEL`` - the program in this process, each turn planned with the earlier turns'
  calls and results in view (what ``freyr eval`` runs on a conversation file);
* ``openai`` - ``freyr serve`` in a subprocess on 127.0.0.1, and the ``openai`` SDK's own
  tool loop as an app writes it: the app's methods as ``tools``, each ``tool_calls`` answered
  with what the app returned, the whole history sent every time;
* ``pydantic-ai`` - the same server, a pydantic-ai ``Agent`` whose tools are the app's
  methods, the message history carried from turn to turn.

    python scripts/bench_conversations.py --model embedded/qwen2.5-coder-1.5b \\
        --contestants python:preset,python:native --out runs/conversations_15b.json
    python scripts/bench_conversations.py --model embedded/qwen2.5-coder-0.5b \\
        --contestants openai,pydantic-ai --limit 4 --out runs/conversations_serve_05b.json
    python scripts/bench_conversations.py --out runs/conversations_15b.json --report-only

Rows are saved as each conversation ends; a rerun skips the finished ones.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import add_out_options, load_rows, markdown_table, running_server, save_rows

from freyr_dspy.benchmark import EvalOptions, spread
from freyr_dspy.datasets import (
    AppWorld,
    ConversationBenchmark,
    ConversationExample,
    apps_from_module,
    check_turn,
    read_conversations,
)
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import CallRecord

ABOUT = "Conversations with live apps: turns and whole conversations right, per contestant."
SUITE = Path(__file__).resolve().parent.parent / "trainsets" / "conversations"
#: Rounds of tool calls a client allows one turn (an agent's own loop limit).
MAX_ROUNDS = 4
STARTUP_SECONDS = 300.0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.report_only:
        if not args.model:
            sys.exit("error: --model is needed to measure (or --report-only)")
        measure(args)
    print("\n".join(report(load_rows(args.out, missing_ok=False))))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=ABOUT)
    parser.add_argument("--model", default=None)
    parser.add_argument("--contestants", default="python:preset,python:native")
    parser.add_argument("--examples", type=Path, default=SUITE / "test.jsonl")
    parser.add_argument("--apps", default=f"{SUITE / 'apps.py'}:APPS")
    parser.add_argument("--limit", type=int, default=None, help="N conversations, spread")
    add_out_options(parser, None)
    return parser


def measure(args: argparse.Namespace) -> None:
    """Hold every conversation with every contestant not saved yet."""
    apps = apps_from_module(args.apps)
    rows = spread(read_conversations(args.examples, apps), args.limit)
    bench = ConversationBenchmark(apps=apps, rows=rows)
    saved = load_rows(args.out)
    done = {(r["contestant"], r["conversation"]) for r in saved}
    for contestant in [c.strip() for c in args.contestants.split(",") if c.strip()]:
        todo = [row for row in rows if (contestant, row.id) not in done]
        if not todo:
            continue
        with _contestant(contestant, args.model, bench) as hold:
            for row in todo:
                started = time.perf_counter()
                result = hold(row)
                result.update(contestant=contestant, conversation=row.id,
                              seconds=round(time.perf_counter() - started, 1))  # fmt: skip
                saved.append(result)
                save_rows(args.out, ABOUT, saved)
                print(_line(result), file=sys.stderr)


Holder = Callable[[ConversationExample], dict[str, Any]]


@contextlib.contextmanager
def _contestant(name: str, model: str, bench: ConversationBenchmark) -> Iterator[Holder]:
    if name.startswith("python:"):
        yield _in_python(name.split(":", 1)[1], model, bench)
        return
    with _served(model) as base:
        if name == "openai":
            yield lambda row: _through_openai(base, model, bench, row)
        elif name == "pydantic-ai":
            yield lambda row: _through_pydantic_ai(base, model, bench, row)
        else:
            sys.exit(f"error: unknown contestant {name!r}: python:LABEL, openai or pydantic-ai")


def _in_python(label: str, model: str, bench: ConversationBenchmark) -> Holder:
    program = FreyrProgram.for_model(
        model, toolbox=bench.program_toolbox, strategy=None if label == "preset" else label,
        sampling={"temperature": 0, "seed": 0},
    )  # fmt: skip
    options = EvalOptions(data_dir=Path("."))
    episodes = {e.id: e for e in bench.episodes(options)}

    def hold(row: ConversationExample) -> dict[str, Any]:
        records = run_episode(bench, program, episodes[str(row.id)])
        return {
            "turns": [r.success for r in records],
            "failures": [r.failure_kind for r in records],
            # what went wrong, turn by turn, so a score can be traced to the calls behind it
            "feedback": [r.diagnostics.get("feedback", "") for r in records],
            "made": [[_call_line(c) for c in r.calls] for r in records],
            "replies": [r.reply for r in records],
            "tokens": sum(r.input_tokens + r.output_tokens for r in records),
        }

    return hold


def _call_line(call: dict[str, Any]) -> str:
    """``tool(arguments) -> outcome``, short: what a turn did, for reading the JSON."""
    outcome = str(call.get("outcome", ""))[:80]
    return f"{call.get('tool')}({json.dumps(call.get('arguments'))}) -> {outcome}"


@contextlib.contextmanager
def _served(model: str) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [
        sys.executable, "-m", "freyr_dspy", "serve", "--model", model,
        "--sampling", "temperature=0", "--sampling", "seed=0", "--port", str(port),
    ]  # fmt: skip
    log = Path("runs") / f"serve-conversations-{port}.log"
    url = f"http://127.0.0.1:{port}"
    with running_server(command, log, f"{url}/health", label="freyr serve",
                        startup_seconds=STARTUP_SECONDS):  # fmt: skip
        yield f"{url}/v1"


def _through_openai(
    base: str, model: str, bench: ConversationBenchmark, row: ConversationExample
) -> dict[str, Any]:
    """The openai SDK's own tool loop against freyr serve, on a live app."""
    from openai import OpenAI

    client = OpenAI(base_url=base, api_key="-", max_retries=0)
    world = AppWorld.build(bench.apps[row.toolbox], row.state)
    messages: list[Any] = []
    made: list[list[CallRecord]] = []
    for index, turn in enumerate(row.turns):
        offered = _offered_tools(world, row, index)
        messages.append({"role": "user", "content": turn.message})
        calls: list[CallRecord] = []
        for _ in range(MAX_ROUNDS):
            choice = client.chat.completions.create(
                model=model, messages=messages, tools=offered
            ).choices[0]
            messages.append(choice.message.model_dump(exclude_none=True))
            if not choice.message.tool_calls:
                break
            for call in choice.message.tool_calls:
                arguments = json.loads(call.function.arguments or "{}")
                outcome = world.toolbox.execute(call.function.name, arguments).outcome
                calls.append(CallRecord(tool=call.function.name, arguments=arguments,
                                        outcome=outcome))  # fmt: skip
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": outcome.render()}
                )
        made.append(calls)
    return _judged(bench, row, world, made)


def _through_pydantic_ai(
    base: str, model: str, bench: ConversationBenchmark, row: ConversationExample
) -> dict[str, Any]:
    """A pydantic-ai agent whose tools are the app's methods, against freyr serve."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    world = AppWorld.build(bench.apps[row.toolbox], row.state)
    provider = OpenAIProvider(base_url=base, api_key="-")
    made: list[list[CallRecord]] = []
    history: list[Any] = []
    for index, turn in enumerate(row.turns):
        calls: list[CallRecord] = []
        names = {t["function"]["name"] for t in _offered_tools(world, row, index)}
        tools = [
            Tool.from_schema(
                _recording(world, name, calls), name=name,
                description=world.toolbox.get(name).description,
                json_schema=world.toolbox.get(name).json_schema(),
            )
            for name in world.toolbox.names if name in names
        ]  # fmt: skip
        agent = Agent(OpenAIChatModel(model, provider=provider), tools=tools)
        run = agent.run_sync(turn.message, message_history=history)
        history = run.all_messages()
        made.append(calls)
    return _judged(bench, row, world, made)


def _recording(world: AppWorld, name: str, calls: list[CallRecord]) -> Callable[..., str]:
    """The app's method ``name`` as an agent's tool that records each call it runs."""

    def tool(**arguments: Any) -> str:
        outcome = world.toolbox.execute(name, arguments).outcome
        calls.append(CallRecord(tool=name, arguments=arguments, outcome=outcome))
        return outcome.render()

    return tool


def _offered_tools(world: AppWorld, row: ConversationExample, index: int) -> list[Any]:
    offered = None
    for turn in reversed(row.turns[: index + 1]):
        if turn.tools is not None:
            offered = set(turn.tools)
            break
    return [t.openai_schema() for t in world.toolbox if offered is None or t.name in offered]


def _judged(
    bench: ConversationBenchmark,
    row: ConversationExample,
    world: AppWorld,
    made: list[list[CallRecord]],
) -> dict[str, Any]:
    steps = bench.episodes(EvalOptions(data_dir=Path(".")))
    [episode] = [e for e in steps if e.id == row.id]
    scores = [
        check_turn(step, calls, world, bench.program_toolbox)
        for step, calls in zip(episode.steps, made, strict=True)
    ]
    return {
        "turns": [s.success for s in scores],
        "failures": [s.failure_kind for s in scores],
        "tokens": None,
    }


def _line(row: dict[str, Any]) -> str:
    right = sum(1 for t in row["turns"] if t >= 1)
    return (
        f"{row['contestant']} {row['conversation']}: {right}/{len(row['turns'])} turns, "
        f"{'right' if right == len(row['turns']) else 'wrong'}, {row['seconds']} s"
    )


def report(rows: list[dict[str, Any]]) -> list[str]:
    """Per contestant: conversations fully right, turns right, seconds and tokens."""
    table = []
    for contestant in dict.fromkeys(r["contestant"] for r in rows):
        mine = [r for r in rows if r["contestant"] == contestant]
        turns = [t for r in mine for t in r["turns"]]
        whole = sum(1 for r in mine if all(t >= 1 for t in r["turns"]))
        tokens = [r["tokens"] for r in mine if r["tokens"] is not None]
        table.append([
            contestant, len(mine), f"{whole} ({100 * whole / len(mine):.1f} %)",
            f"{sum(t >= 1 for t in turns)}/{len(turns)} ({100 * sum(turns) / len(turns):.1f} %)",
            f"{sum(r['seconds'] for r in mine) / len(mine):.1f}",
            f"{sum(tokens) / len(tokens):.0f}" if tokens else "-",
        ])  # fmt: skip
    return markdown_table(
        ["contestant", "conversations", "fully right", "turns right", "s / conversation",
         "tokens / conversation"],
        table,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
