"""Benchmark NLT tool selection and GeckOpt gating on one model, in one run.

Part 1 - the NLT benchmarks (nlt-alex, nlt-sage): accuracy (exact match of the selected
set), variance across inputs and runs, tokens in/out per request, and each strategy's input
tokens as a ratio of ``native`` (the paper: NLT -47.4 %).

Part 2 - the gate on a synthetic 60-tool catalog in 8 libraries: input tokens per request of
``gated`` vs its inner strategy alone on the same messages, the saving, the fallback rate and
whether the right tool was still called (GeckOpt: -24.6 % tokens for < 1 % success loss).

Prints both tables and writes everything (with the raw records) as JSON.

    python scripts/bench_nlt.py --runs 1 --limit 4 --out /tmp/bench_nlt.json
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

import dspy
from _bench import save_json
from dspy.clients.base_lm import GLOBAL_HISTORY
from dspy.lm15 import Request, Response, Usage

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.domains import Domain
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import FreyrProgram, build_assignment
from freyr_dspy.settings import Settings
from freyr_dspy.strategies import load_strategies
from freyr_dspy.testing import FakeCall, FakeEngine, read_call
from freyr_dspy.tools import Tool, Toolbox, ToolParameter

# --------------------------------------------------------------------------- the 60 tools

LIBRARIES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "weather": (
        "forecasts, temperatures, rain and wind",
        [
            ("get_forecast", "Get the weather forecast of a city for the next days."),
            ("get_current_temperature", "Get the temperature in a city right now."),
            ("get_rain_probability", "Get the chance of rain in a city today."),
            ("get_wind_speed", "Get the current wind speed in a city."),
            ("get_uv_index", "Get the UV index in a city."),
            ("get_air_quality", "Get the air quality index of a city."),
            ("get_sunrise_time", "Get the time of sunrise in a city."),
            ("get_weather_alerts", "List the active storm or heat alerts for a region."),
        ],
    ),
    "calendar": (
        "meetings, events and reminders",
        [
            ("create_event", "Create a calendar event at a date and time."),
            ("delete_event", "Delete a calendar event."),
            ("list_events", "List the events of a given day."),
            ("move_event", "Move an event to another date or time."),
            ("set_reminder", "Set a reminder for a date and time."),
            ("invite_attendee", "Invite a person to an event."),
            ("find_free_slot", "Find a free slot in the calendar of a given day."),
        ],
    ),
    "email": (
        "reading, writing and organising e-mail",
        [
            ("send_email", "Send an e-mail to a recipient."),
            ("read_inbox", "Read the latest e-mails of the inbox."),
            ("search_email", "Search e-mails by keyword."),
            ("archive_email", "Archive an e-mail."),
            ("forward_email", "Forward an e-mail to someone."),
            ("mark_email_read", "Mark an e-mail as read."),
            ("create_email_folder", "Create a folder for e-mails."),
        ],
    ),
    "music": (
        "songs, playlists and playback",
        [
            ("play_song", "Play a song by its title."),
            ("pause_playback", "Pause the music that is playing."),
            ("skip_track", "Skip to the next track."),
            ("create_playlist", "Create a new playlist."),
            ("add_to_playlist", "Add a song to a playlist."),
            ("search_artist", "Search for an artist and their albums."),
            ("set_volume", "Set the playback volume."),
            ("get_lyrics", "Show the lyrics of a song."),
        ],
    ),
    "banking": (
        "accounts, balances, cards and transfers",
        [
            ("get_balance", "Get the balance of a bank account."),
            ("transfer_money", "Transfer money between accounts."),
            ("list_transactions", "List the recent transactions of an account."),
            ("block_card", "Block a lost or stolen bank card."),
            ("pay_bill", "Pay a bill from an account."),
            ("get_exchange_rate", "Get the exchange rate between two currencies."),
            ("open_savings_account", "Open a new savings account."),
        ],
    ),
    "travel": (
        "flights, hotels, trains and car rental",
        [
            ("search_flights", "Search flights between two cities on a date."),
            ("book_hotel", "Book a hotel room in a city."),
            ("cancel_booking", "Cancel a travel booking."),
            ("get_flight_status", "Get the status of a flight by its number."),
            ("rent_car", "Rent a car in a city."),
            ("search_trains", "Search trains between two cities."),
            ("check_in_online", "Check in online for a flight."),
            ("get_visa_requirements", "Get the visa requirements for a country."),
        ],
    ),
    "shopping": (
        "products, carts, orders and deliveries",
        [
            ("search_product", "Search the shop for a product."),
            ("add_to_cart", "Add a product to the shopping cart."),
            ("checkout_cart", "Pay for the shopping cart."),
            ("track_order", "Track the delivery of an order."),
            ("return_item", "Return an item from an order."),
            ("apply_coupon", "Apply a coupon code to the cart."),
            ("list_orders", "List past orders."),
        ],
    ),
    "smart_home": (
        "lights, heating, locks and appliances",
        [
            ("turn_on_lights", "Turn on the lights of a room."),
            ("turn_off_lights", "Turn off the lights of a room."),
            ("set_thermostat", "Set the thermostat to a temperature."),
            ("lock_door", "Lock a door of the house."),
            ("start_vacuum", "Start the robot vacuum cleaner."),
            ("check_camera", "Show the picture of a security camera."),
            ("start_washing_machine", "Start the washing machine."),
            ("get_energy_usage", "Get today's energy usage of the house."),
        ],
    ),
}

#: Messages for the gate measurement and the one tool each needs.
GATE_MESSAGES: tuple[tuple[str, str], ...] = (
    ("Will it rain in Lisbon today?", "get_rain_probability"),
    ("Put a dentist appointment in my calendar for Monday at 9.", "create_event"),
    ("Send an e-mail to Sam saying I'll be late.", "send_email"),
    ("Play Bohemian Rhapsody.", "play_song"),
    ("How much money is on my checking account?", "get_balance"),
    ("Find me a flight from Paris to Rome on May 3.", "search_flights"),
    ("Where is my order 5512? It hasn't arrived.", "track_order"),
    ("Turn off the lights in the kitchen.", "turn_off_lights"),
)


def make_gate_toolbox() -> Toolbox:
    """The synthetic catalog: every tool takes one optional free-text ``details`` argument."""
    details = ToolParameter("details", "string", "what the request says", required=False)
    tools = [
        Tool(name=name, description=desc, parameters=(details,), library=library)
        for library, (_, entries) in LIBRARIES.items()
        for name, desc in entries
    ]
    return Toolbox(tools, {library: desc for library, (desc, _) in LIBRARIES.items()})


class OracleEngine(FakeEngine):
    """Answers every role of the gate messages correctly; counts tokens like the real model.

    It measures what the gate saves when it is right (GeckOpt's setting, with models that
    gate well), independently of how well the benchmarked model gates: the prompts are
    the real ones, counted with the embedded model's tokenizer (chat-template tokens left
    out, the same few per call in both arms).
    """

    def __init__(self, count_tokens: Any) -> None:
        super().__init__()
        self.count_tokens = count_tokens
        self.tool_of = dict(GATE_MESSAGES)
        self.library_of = {t: lib for lib, (_, tools) in LIBRARIES.items() for t, _ in tools}

    def answer(self, call: FakeCall) -> Any:
        tool = self.tool_of[call.inputs["message"]]
        if call.role == "library":
            return {"selected": [self.library_of[tool]]}
        if call.role == "intent":
            return {"intents": [tool]}
        if call.role == "tool_selection":
            names = re.findall(r"^- ([\w.-]+)", call.inputs["tools"], re.M)
            lines = [f"{n} -- {'YES' if n == tool else 'NO'}" for n in names]
            return {
                "thinking": f"The message needs {tool}.",
                "assessment": "\n".join([*lines, "Assessment finished."]),
            }
        if call.role == "parameters":
            return {"arguments": {"details": call.inputs["message"]}}
        return {"reply": "Done."}

    def complete(self, request: Request) -> Response:
        """Answer, then replace the word-count usage by real token counts."""
        response = super().complete(request)
        prompt = read_call(request).prompt
        text = "".join(getattr(p, "text", "") for p in response.message.parts)
        tokens_in, tokens_out = self.count_tokens(prompt), self.count_tokens(text)
        usage = Usage(
            input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out
        )
        return dataclasses.replace(response, usage=usage)


# --------------------------------------------------------------------------- running


def assign(program: FreyrProgram, args: argparse.Namespace, run: int) -> FreyrProgram:
    """Give every role the model; a per-run seed makes replications fresh LM calls."""
    if args.oracle is not None:
        program.set_lm(dspy.LM("oracle/gate", engine=args.oracle, cache=False))
        return program
    specs = [*args.sampling, f"seed={args.seed + run}"]
    return program.apply_assignment(
        build_assignment(
            program.role_names,
            default_model=args.model,
            sampling_specs=specs,
            api_base=args.api_base,
        )
    )


def nlt_part(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    """Run the NLT benchmarks; return per-benchmark summaries and the raw records."""
    available = load_strategies()
    results: dict[str, Any] = {}
    for name in args.benchmarks:
        bench = get_benchmark(name)
        options = EvalOptions(data_dir=data_dir, limit=args.limit, extra={"prompt": args.prompt})
        records, decision = [], {}
        for strategy in args.strategies:
            if strategy not in available:
                print(f"  {name}: strategy {strategy!r} is not available; skipped", file=sys.stderr)
                continue
            first_calls: list[int] = []
            for run in range(args.runs):
                program = assign(bench.make_program(strategy, options), args, run)
                for episode in bench.episodes(options):
                    started = time.perf_counter()
                    GLOBAL_HISTORY.clear()  # this script's own bookkeeping: one request's calls
                    records.extend(run_episode(bench, program, episode, run=run))
                    if GLOBAL_HISTORY:
                        first_calls.append(int(GLOBAL_HISTORY[0]["usage"]["prompt_tokens"] or 0))
                    print(
                        f"  {name} {strategy} run {run} input {episode.id}: "
                        f"{records[-1].success:.0f} ({time.perf_counter() - started:.1f} s)",
                        file=sys.stderr,
                    )
            decision[strategy] = sum(first_calls) / len(first_calls) if first_calls else None
        results[name] = {
            **bench.summarize(records),
            "decision_tokens_in": decision,
            "decision_in_vs_native": _ratios(decision),
            "records": [r.to_json() for r in records],
        }
    return results


def _ratios(values: dict[str, float | None]) -> dict[str, float | None]:
    """Each strategy's value over native's (the first LM call: the tool decision)."""
    native = values.get("native")
    return {k: (v / native if v and native else None) for k, v in values.items() if k != "native"}


def gate_part(args: argparse.Namespace) -> dict[str, Any]:
    """The gate with the benchmarked model, then with an always-right oracle."""
    measured = gate_runs(args)
    from freyr_dspy.backends import shared_engine

    args.oracle = OracleEngine(shared_engine("embedded/smollm2-135m").count_tokens)
    try:
        measured["oracle"] = gate_runs(args)["inner"]
    finally:
        args.oracle = None
    return measured


def gate_runs(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``gated`` and its inner strategy alone on the 60-tool catalog."""
    box = make_gate_toolbox()
    domain = Domain("gate-bench", "60 synthetic tools in 8 libraries", make_toolbox=lambda: box)
    messages = GATE_MESSAGES[: args.gate_messages]
    rows: dict[str, Any] = {"tools": len(box), "libraries": len(box.libraries), "inner": {}}
    for inner in args.gate_inner:
        arms = {}
        for strategy in (inner, "gated"):
            program = assign(
                FreyrProgram(
                    domain,
                    strategy=strategy,
                    max_retries=0,
                    options={"inner": inner, "respond": False},
                ),
                args,
                0,
            )
            arms[strategy] = [
                _gate_request(program, message, tool, inner) for message, tool in messages
            ]
        rows["inner"][inner] = _gate_summary(arms[inner], arms["gated"])
    return rows


def _gate_request(program: FreyrProgram, message: str, tool: str, inner: str) -> dict[str, Any]:
    started = time.perf_counter()
    result = program(message=message).result
    print(
        f"  gate {program.strategy_name} (inner {inner}): {tool} -> "
        f"{[c.tool for c in result.calls]} ({time.perf_counter() - started:.1f} s)",
        file=sys.stderr,
    )
    selector = "intent" if inner == "freyr" else "tool_selection"
    return {
        "message": message,
        "expected": tool,
        "called": [c.tool for c in result.calls],
        "correct": [c.tool for c in result.calls] == [tool],
        "tokens_in": result.total_usage.input_tokens,
        "tokens_out": result.total_usage.output_tokens,
        "fallback": result.usage.get(selector, None) is not None
        and result.usage[selector].lm_calls > 1,
        "failure": str(result.failure) if result.failure else None,
    }


def _gate_summary(plain: list[dict[str, Any]], gated: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(rows: list[dict[str, Any]], key: str) -> float:
        return sum(float(r[key]) for r in rows) / len(rows) if rows else math.nan

    plain_in, gated_in = mean(plain, "tokens_in"), mean(gated, "tokens_in")
    return {
        "plain_tokens_in": plain_in,
        "gated_tokens_in": gated_in,
        "saving": 1 - gated_in / plain_in if plain_in else None,
        "plain_accuracy": mean(plain, "correct"),
        "gated_accuracy": mean(gated, "correct"),
        "fallback_rate": mean(gated, "fallback"),
        "requests": {"plain": plain, "gated": gated},
    }


# --------------------------------------------------------------------------- output


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_tables(report: dict[str, Any]) -> None:
    """Print the NLT table and the gate table.

    ``in/nat`` compares whole requests; ``dec_in`` is the input of the first LM call (the
    tool decision) and ``dec/nat`` its ratio to native's, which leaves out native's extra
    reply call after the tool calls.
    """
    print(
        f"{'benchmark':<10} {'strategy':<9} {'acc':>5} {'var_in':>6} {'var_run':>7} "
        f"{'tok_in':>7} {'tok_out':>7} {'calls':>5} {'s/req':>6} {'in/nat':>6} "
        f"{'dec_in':>6} {'dec/nat':>7}"
    )
    for name, data in report["nlt"].items():
        for strategy, s in data["strategies"].items():
            print(
                f"{name:<10} {strategy:<9} {_fmt(s['accuracy'])!s:>5} "
                f"{_fmt(s['variance_inputs'], 3):>6} {_fmt(s['variance_runs'], 3):>7} "
                f"{_fmt(s['tokens_in'], 0):>7} {_fmt(s['tokens_out'], 0):>7} "
                f"{_fmt(s['lm_calls'], 1):>5} {_fmt(s['seconds'], 1):>6} "
                f"{_fmt(data['tokens_in_vs_native'].get(strategy)):>6} "
                f"{_fmt(data['decision_tokens_in'].get(strategy), 0):>6} "
                f"{_fmt(data['decision_in_vs_native'].get(strategy)):>7}"
            )
    gate = report.get("gate")
    if gate:
        print(f"\ngate on {gate['tools']} tools in {gate['libraries']} libraries")
        print(
            f"{'inner':<6} {'plain_in':>8} {'gated_in':>8} {'saving':>7} {'acc_plain':>9} "
            f"{'acc_gated':>9} {'fallback':>8}"
        )
        rows = [(inner, g) for inner, g in gate["inner"].items()]
        rows += [(f"{inner}*", g) for inner, g in gate.get("oracle", {}).items()]
        for inner, g in rows:
            print(
                f"{inner:<6} {_fmt(g['plain_tokens_in'], 0):>8} {_fmt(g['gated_tokens_in'], 0):>8}"
                f" {_fmt(g['saving']):>7} {_fmt(g['plain_accuracy']):>9} "
                f"{_fmt(g['gated_accuracy']):>9} {_fmt(g['fallback_rate']):>8}"
            )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="benchmark data directory")
    parser.add_argument("--model", default="embedded/qwen2.5-coder-1.5b")
    parser.add_argument("--api-base", default=None)
    parser.add_argument(
        "--benchmarks", type=lambda s: s.split(","), default=["nlt-alex", "nlt-sage"]
    )
    parser.add_argument(
        "--strategies", type=lambda s: s.split(","), default=["nlt", "native", "prompted", "freyr"]
    )
    parser.add_argument("--prompt", choices=["signature", "paper"], default="signature")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="inputs per benchmark")
    parser.add_argument(
        "--sampling",
        action="append",
        default=None,
        help="[ROLE.]PARAM=VALUE (default: temperature=0.8 top_p=0.6)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gate-messages", type=int, default=len(GATE_MESSAGES))
    parser.add_argument("--gate-inner", type=lambda s: s.split(","), default=["nlt", "freyr"])
    parser.add_argument("--skip-nlt", action="store_true")
    parser.add_argument("--skip-gate", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench_nlt.json"))
    args = parser.parse_args(argv)
    args.sampling = args.sampling or ["temperature=0.8", "top_p=0.6"]
    args.oracle = None
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    started = time.perf_counter()
    report: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "model": args.model,
        "runs": args.runs,
        "limit": args.limit,
        "prompt": args.prompt,
        "sampling": args.sampling,
        "nlt": {},
        "gate": None,
    }
    if not args.skip_nlt:
        data_dir = Settings.from_env(os.environ, data_dir=args.data).resolve_data_dir()
        report["nlt"] = nlt_part(args, data_dir)
    if not args.skip_gate:
        report["gate"] = gate_part(args)
    report["seconds"] = time.perf_counter() - started
    print_tables(report)
    save_json(args.out, report)
    print("(* = oracle: every role right, tokens counted with the SmolLM2 tokenizer)")
    print(f"\nwrote {args.out} ({report['seconds']:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
