"""The embedded models side by side: load, speed, memory, intent accuracy, and the prefix cache.

For each model, in a fresh process of its own (so load time and peak RSS are its own):
- load seconds, prompt and generation tokens per second, peak RSS after loading;
- accuracy of the ``intent`` role on our own tool-selection set (``scripts/data/intent_set.json``:
  one-tool, two-tool and no-tool requests over four toolboxes), exact set of tool names;
- FREYR steps on LLMaker (bootstrap mode) with llama.cpp's RAM prefix cache off, then on:
  seconds per step and prompt tokens evaluated vs sent.

    python scripts/bench_models.py                                   # every embedded model
    python scripts/bench_models.py --models embedded/qwen2.5-coder-0.5b --llmaker-steps 3

Prints a markdown table; writes every number to ``--out`` (default runs/bench_models.json).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import markdown_table, save_json

from freyr_dspy.backends import DEFAULT_PREFIX_CACHE_BYTES, EMBEDDED_MODELS, shared_engine
from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.domains import Domain
from freyr_dspy.errors import one_line
from freyr_dspy.evaluation import code_version, run_episode
from freyr_dspy.program import FreyrProgram, build_assignment
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Toolbox

INTENT_SET = Path(__file__).parent / "data" / "intent_set.json"
GREEDY = ["temperature=0", "seed=0"]
#: ~600 tokens of plain prose for the prompt-speed probe.
PROSE = " ".join(
    f"Room {i} of the castle holds {i % 5 + 1} goblins, a chest of gold and a trap by the door."
    for i in range(30)
)
#: The ``intent-probe`` contestant: FREYR's planning step alone, its plan not checked.
PROBE = "intent-probe"


def measure_speed(model_id: str) -> dict[str, float]:
    """Load time, prompt and generation speed (prefix cache off), peak RSS after loading."""
    engine = shared_engine(model_id)
    started = time.perf_counter()
    engine.load()
    load_s = time.perf_counter() - started
    engine.set_prefix_cache(0)
    llama = engine._llama
    llama.reset()
    started = time.perf_counter()
    out = llama.create_completion(PROSE, max_tokens=1, temperature=0.0)
    prompt_s = time.perf_counter() - started
    prompt_tokens = out["usage"]["prompt_tokens"]
    llama.reset()
    short = "List the numbers from 1 to 100, separated by commas:"
    started = time.perf_counter()
    out = llama.create_completion(short, max_tokens=128, temperature=0.0)
    generation_s = time.perf_counter() - started
    generated = out["usage"]["completion_tokens"]
    return {
        "load_s": round(load_s, 2),
        "prompt_tok_s": round(prompt_tokens / prompt_s, 1),
        "generation_tok_s": round(generated / max(generation_s, 1e-9), 1),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
    }


def tools_chosen(model_id: str, strategy: str, toolbox: Toolbox, message: str) -> list[str]:
    """The tools a strategy picks for one message: intents, or the native calls made."""
    domain = Domain("bench", "bench toolbox", make_toolbox=lambda: toolbox)
    label = "freyr+confirm=false" if strategy == PROBE else strategy
    program = FreyrProgram.for_model(
        model_id, domain=domain, strategy=label, max_retries=0, sampling=GREEDY
    )
    if strategy == PROBE:  # the plan only: no parameters, calls or reply
        plan = program.strategy.select
        run = program.start_run(message)
        result = program.run_step(run, lambda run: run.result("", plan(run).plan))
    else:
        result = program(message=message).result
    if strategy == "native":
        return [call.tool for call in result.calls]
    return [name for name in result.intents if name != "conversation"]


def measure_intents(model_id: str, strategy: str = PROBE) -> dict[str, Any]:
    """Exact-set accuracy of the tools chosen on our own set, greedy decoding."""
    data = json.loads(INTENT_SET.read_text(encoding="utf-8"))
    rows = []
    for request in data["requests"]:
        toolbox = Toolbox.from_openai(data["toolboxes"][request["toolbox"]])
        intents = tools_chosen(model_id, strategy, toolbox, request["message"])
        rows.append(
            {
                "message": request["message"],
                "expected": request["expected"],
                "got": intents,
                "kind": f"{len(request['expected'])}-tool",
                "ok": sorted(intents) == sorted(request["expected"]),
            }
        )
    by_kind = {
        kind: round(statistics.mean(r["ok"] for r in rows if r["kind"] == kind), 3)
        for kind in sorted({r["kind"] for r in rows})
    }
    accuracy = round(statistics.mean(r["ok"] for r in rows), 3)
    return {"intent_accuracy": accuracy, "intent_by_kind": by_kind, "intent_rows": rows}


def measure_llmaker(model_id: str, steps: int, cache_bytes: int) -> dict[str, Any]:
    """FREYR on the first LLMaker steps (bootstrap mode, greedy), prefix cache as given."""
    engine = shared_engine(model_id)
    engine.set_prefix_cache(cache_bytes)
    settings = Settings()
    benchmark = get_benchmark("llmaker")
    options = EvalOptions(data_dir=settings.resolve_data_dir(), limit=steps)
    program = benchmark.make_program("freyr", options)
    program.apply_assignment(
        build_assignment(program.role_names, default_model=model_id, sampling_specs=GREEDY)
    )
    sent0, evaluated0 = engine.prompt_tokens_sent, engine.prompt_tokens_evaluated
    records = [r for ep in benchmark.episodes(options) for r in run_episode(benchmark, program, ep)]
    sent = engine.prompt_tokens_sent - sent0
    evaluated = engine.prompt_tokens_evaluated - evaluated0
    n = len(records) or 1
    return {
        "steps": len(records),
        "success": round(sum(r.success for r in records) / n, 3),
        "seconds_per_step": round(statistics.median(r.seconds for r in records), 1),
        "sent_per_step": round(sent / n),
        "evaluated_per_step": round(evaluated / n),
        "evaluated_ratio": round(evaluated / max(sent, 1), 3),
    }


def measure_native(model_id: str, formats: list[str]) -> dict[str, Any]:
    """The same set through the ``native`` strategy, once per way of offering the tools."""
    engine = shared_engine(model_id)
    own = engine.tool_chat_format
    results = {}
    for fmt in formats:
        engine.tool_chat_format = fmt
        measured = measure_intents(model_id, strategy="native")
        results[fmt] = {
            "accuracy": measured["intent_accuracy"],
            "by_kind": measured["intent_by_kind"],
        }
    engine.tool_chat_format = own
    return results


def worker(model_id: str, steps: int, native_formats: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {"model": model_id, "code": code_version()}
    result.update(measure_speed(model_id))
    engine = shared_engine(model_id)
    engine.set_prefix_cache(DEFAULT_PREFIX_CACHE_BYTES)
    parts = {"intent": lambda: measure_intents(model_id)}
    if native_formats:
        parts["native"] = lambda: {"native": measure_native(model_id, native_formats)}
    if steps:
        parts["llmaker_no_cache"] = lambda: {
            "llmaker_no_cache": measure_llmaker(model_id, steps, 0)
        }
        parts["llmaker_cache"] = lambda: {
            "llmaker_cache": measure_llmaker(model_id, steps, DEFAULT_PREFIX_CACHE_BYTES)
        }
    for name, part in parts.items():
        try:  # one failing part must not lose the others
            result.update(part())
        except Exception as exc:  # reported in the JSON; the bench goes on
            result.setdefault("errors", {})[name] = one_line(exc, limit=None, typed=True)
            traceback.print_exc()
    return result


COLUMNS = (
    "model",
    "load s",
    "prompt tok/s",
    "gen tok/s",
    "peak RSS GB",
    "intent exact",
    "0/1/2-tool",
    "native exact: template / chatml-fc",
    "LLMaker s/step no cache → cache",
    "prompt tokens evaluated/sent",
)


def table(results: list[dict[str, Any]]) -> str:
    return "\n".join(markdown_table(COLUMNS, [_row(r) for r in results]))


def _row(r: dict[str, Any]) -> list[object]:
    kinds = r.get("intent_by_kind", {})
    by_kind = "/".join(f"{kinds.get(k, 0):.2f}" for k in ("0-tool", "1-tool", "2-tool"))
    off, on = r.get("llmaker_no_cache"), r.get("llmaker_cache")
    llmaker = f"{off['seconds_per_step']} → {on['seconds_per_step']}" if off and on else "-"
    ratio = (
        f"{off['evaluated_ratio']:.2f} → {on['evaluated_ratio']:.2f} "
        f"({on['evaluated_per_step']}/{on['sent_per_step']})"
        if off and on
        else "-"
    )
    native = " / ".join(f"{v['accuracy']:.2f}" for v in r.get("native", {}).values()) or "-"
    accuracy = f"{r.get('intent_accuracy', float('nan')):.2f}"
    return [
        r["model"],
        r["load_s"],
        r["prompt_tok_s"],
        r["generation_tok_s"],
        r["peak_rss_gb"],
        accuracy,
        by_kind,
        native,
        llmaker,
        ratio,
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(EMBEDDED_MODELS))
    parser.add_argument("--llmaker-steps", type=int, default=5, help="0 skips the LLMaker part")
    parser.add_argument(
        "--native-formats",
        default="template,chatml-function-calling",
        help="ways to offer tools to the native strategy, compared on the same set ('' skips)",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench_models.json"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        formats = [f for f in args.native_formats.split(",") if f]
        print(json.dumps(worker(args.worker, args.llmaker_steps, formats)))
        return 0
    results = []
    for model_id in args.models.split(","):
        print(f"{model_id} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, __file__, "--worker", model_id]
        cmd += ["--llmaker-steps", str(args.llmaker_steps)]
        cmd += ["--native-formats", "" if "smollm2" in model_id else args.native_formats]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(table(results[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(results))
    save_json(args.out, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
