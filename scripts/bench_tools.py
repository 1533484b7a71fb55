"""Tool calling side by side: freyr, nlt, prompted and native on our own suite, one run per model.

The suite (``scripts/data/tool_suite.json``, written for this project) has 74 requests over five
toolboxes built with ``Toolbox.from_openai``: dotted and dashed names, nested object and array
arguments, enums, optional arguments with defaults, one-tool, two-tool and no-tool requests,
and descriptions with example values (``e.g. 'Lisbon'``) that the requests never use.

For every model, request and strategy (greedy decoding, the program's defaults otherwise):
- exact call: the calls that succeeded are exactly the expected ones, in order, with equal
  values (``freyr_dspy.evaluation._calls``); a no-tool request must make no call;
- parse failures: answers the adapter could not parse (``RoleUsage.parse_failures``);
- rejected attempts: calls the tool's validation refused (unknown tool, wrong argument);
- copied examples: argument values equal to an example in the tool's description;
- dropped optional: optional arguments left out because nobody stated their value
  (``freyr_dspy.strategies._grounding``, on in every strategy);
- input and output tokens, and seconds, per request.

    python scripts/bench_tools.py --out runs/bench_tools.json            # both Qwen models
    python scripts/bench_tools.py --models embedded/qwen2.5-coder-0.5b --limit 10
    python scripts/bench_tools.py --out runs/bench_tools.json --report-only

Rows are written to ``--out`` as they finish; a rerun skips the rows already there (resume).
Prints one markdown table per model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import add_out_options, load_rows, markdown_table, mean_or_nan, save_rows

from freyr_dspy.backends import DEFAULT_PREFIX_CACHE_BYTES, EMBEDDED_MODELS, shared_engine
from freyr_dspy.domains import Domain
from freyr_dspy.errors import one_line
from freyr_dspy.evaluation import calls_match
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result
from freyr_dspy.settings import DEFAULT_MODEL, FAST_MODEL

# NOTE: the copied-example guard's own reading of a tool's examples, so the count below means
# what the guard means; no public API offers it (test_scripts_public_api.py lists it).
from freyr_dspy.strategies._grounding import example_values, examples_of
from freyr_dspy.tools import Toolbox

SUITE = Path(__file__).parent / "data" / "tool_suite.json"
STRATEGIES = ("freyr", "nlt", "prompted", "native")
GREEDY = ["temperature=0", "seed=0"]


def load_suite() -> tuple[dict[str, Toolbox], list[dict[str, Any]]]:
    """The toolboxes (by name) and the requests of the suite."""
    data = json.loads(SUITE.read_text(encoding="utf-8"))
    boxes = {name: Toolbox.from_openai(tools) for name, tools in data["toolboxes"].items()}
    return boxes, data["requests"]


def kind(request: dict[str, Any]) -> str:
    """``0-tool``, ``1-tool`` or ``2-tool``."""
    return f"{len(request['expected'])}-tool"


def run_request(model: str, strategy: str, toolbox: Toolbox, request: dict[str, Any]) -> Result:
    """One request through one strategy; the state, if any, is shown to the roles as text."""
    domain = Domain(
        "bench-tools",
        "a toolbox of the tool-calling suite",
        make_toolbox=lambda: toolbox,
        renderers={"text": lambda state: state or "(no state)"},
    )
    program = FreyrProgram.for_model(model, domain=domain, strategy=strategy, sampling=GREEDY)
    return program(message=request["message"], state=request.get("state", "")).result


def copied_examples_made(result: Result, toolbox: Toolbox) -> int:
    """Argument values in the calls made that equal an example of the called tool's description
    (``freyr_dspy.strategies._grounding.examples_of``), whether or not the user also said them."""
    copied = 0
    for call in result.calls:
        if call.tool not in toolbox.names:
            continue
        examples = examples_of(toolbox.get(call.tool))
        copied += sum(
            isinstance(call.arguments[name], str)
            for name, _ in example_values(examples, call.arguments)
        )
    return copied


def score_row(
    model: str, strategy: str, request: dict[str, Any], toolbox: Toolbox, result: Result
) -> dict[str, Any]:
    """Everything measured of one request."""
    made = [(c.tool, c.arguments) for c in result.calls if c.outcome.ok]
    usage = result.total_usage
    return {
        "model": model,
        "strategy": strategy,
        "id": request["id"],
        "kind": kind(request),
        "ok": calls_match(request["expected"], made, toolbox),
        "made": [{"name": n, "arguments": a} for n, a in made],
        "intents": result.intents,
        "parse_failures": usage.parse_failures,
        "rejected_attempts": sum(len(c.errors) for c in result.calls),
        "copied_examples": copied_examples_made(result, toolbox),
        "dropped_optional": sum(len(c.dropped) for c in result.calls),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "seconds": round(usage.seconds, 2),
        "failure": str(result.failure) if result.failure else None,
    }


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run every missing (model, strategy, request) row, saving after each."""
    boxes, requests = load_suite()
    requests = requests[: args.limit] if args.limit else requests
    rows = load_rows(args.out)
    done = {(r["model"], r["strategy"], r["id"]) for r in rows}
    for model in args.models.split(","):
        if model in EMBEDDED_MODELS:  # the shared engine's cache on, whatever ran before
            shared_engine(model).set_prefix_cache(DEFAULT_PREFIX_CACHE_BYTES)
        for request in requests:  # strategies inner: a partial run still compares them
            for strategy in args.strategies.split(","):
                if (model, strategy, request["id"]) in done:
                    continue
                toolbox = boxes[request["toolbox"]]
                started = time.perf_counter()
                try:
                    result = run_request(model, strategy, toolbox, request)
                    row = score_row(model, strategy, request, toolbox, result)
                except Exception as exc:  # recorded as a failed row; the bench goes on
                    traceback.print_exc()
                    row = {
                        "model": model,
                        "strategy": strategy,
                        "id": request["id"],
                        "kind": kind(request),
                        "ok": False,
                        "error": one_line(exc, limit=None, typed=True),
                    }
                row["wall_seconds"] = round(time.perf_counter() - started, 2)
                rows.append(row)
                mark = "ok" if row["ok"] else "--"
                print(
                    f"{model} {strategy:9} {request['id']:12} {mark} {row.get('made')}",
                    file=sys.stderr,
                    flush=True,
                )
                save_rows(args.out, __doc__.splitlines()[0], rows)
    return rows


def rescore(rows: list[dict[str, Any]]) -> None:
    """Score the saved calls again, so a report always uses the current matching rules."""
    boxes, requests = load_suite()
    by_id = {r["id"]: r for r in requests}
    for row in rows:
        if "made" in row:
            request = by_id[row["id"]]
            made = [(c["name"], c["arguments"]) for c in row["made"]]
            row["ok"] = calls_match(request["expected"], made, boxes[request["toolbox"]])


def summary(rows: list[dict[str, Any]], model: str, strategy: str) -> dict[str, Any]:
    """One table row: accuracy by kind, failures, tokens and seconds."""
    mine = [r for r in rows if r["model"] == model and r["strategy"] == strategy]
    scored = [r for r in mine if "error" not in r]
    out: dict[str, Any] = {"n": len(mine), "errors": len(mine) - len(scored)}
    out["exact"] = mean_or_nan(r["ok"] for r in mine)
    for k in ("1-tool", "2-tool", "0-tool"):
        out[k] = mean_or_nan(r["ok"] for r in mine if r["kind"] == k)
    for field in ("parse_failures", "rejected_attempts", "copied_examples", "dropped_optional"):
        out[field] = sum(r.get(field, 0) for r in scored)
    for field in ("input_tokens", "output_tokens", "seconds"):
        out[field] = mean_or_nan(r[field] for r in scored)
    out["median_seconds"] = statistics.median(r["seconds"] for r in scored) if scored else 0
    return out


COLUMNS = (
    "strategy",
    "n",
    "exact call",
    "1-tool",
    "2-tool",
    "no-tool",
    "parse failures",
    "rejected attempts",
    "copied examples",
    "dropped optional",
    "input tok/request",
    "× native",
    "output tok/request",
    "s/request (median)",
)


def table(rows: list[dict[str, Any]]) -> str:
    """One markdown table per model; token ratios against ``native`` on the same model."""
    lines = []
    for model in dict.fromkeys(r["model"] for r in rows):
        strategies = list(dict.fromkeys(r["strategy"] for r in rows if r["model"] == model))
        stats = {s: summary(rows, model, s) for s in strategies}
        native_in = stats.get("native", {}).get("input_tokens")
        lines.append(f"\n{model}\n")
        lines += markdown_table(COLUMNS, [_row(s, st, native_in) for s, st in stats.items()])
    return "\n".join(lines)


def _row(strategy: str, st: dict[str, Any], native_in: float | None) -> list[str]:
    errors = f" ({st['errors']} errors)" if st["errors"] else ""
    return [
        strategy,
        f"{st['n']}{errors}",
        *(f"{st[k]:.2f}" for k in ("exact", "1-tool", "2-tool", "0-tool")),
        *(str(st[k]) for k in ("parse_failures", "rejected_attempts", "copied_examples")),
        str(st["dropped_optional"]),
        f"{st['input_tokens']:.0f}",
        f"{st['input_tokens'] / native_in:.2f}" if native_in else "-",
        f"{st['output_tokens']:.0f}",
        f"{st['median_seconds']:.1f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=f"{FAST_MODEL},{DEFAULT_MODEL}")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--limit", type=int, default=0, help="first N requests only (0: all)")
    add_out_options(parser, default=Path("runs/bench_tools.json"))
    args = parser.parse_args(argv)
    if args.report_only:
        rows = load_rows(args.out, missing_ok=False)
        rescore(rows)  # rows of a run are scored as they finish
    else:
        rows = run(args)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
