"""CallNavi: input tokens per question vs catalog size, with routing and AST match per strategy.

Same model, one run, the same questions for every strategy. For each domain the table shows
the catalog size (APIs, and the tokens of its full / brief / names renderings when the model
has a tokenizer we can reach), then per strategy: input tokens and LM calls per question,
routing exact match, AST exact match (original and strict), and how many questions failed
because the prompt did not fit the context window.

    python scripts/bench_callnavi.py --domains bank,hr --limit 3 --out runs/bench_callnavi.json

``--limit`` is per domain (questions taken round-robin over easy/medium/hard). Runs go
through ``freyr_dspy.evaluation.evaluate``, so ``--out`` is resumable like ``freyr eval``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import markdown_table

from freyr_dspy.benchmarks import get_benchmark
from freyr_dspy.benchmarks.callnavi import callnavi_dir, load_domain, make_toolbox, render_catalog
from freyr_dspy.evaluation import EvalConfig, evaluate, report_data, write_json
from freyr_dspy.settings import Settings

LEVELS = ("full", "brief", "names")


def catalog_sizes(folder: Path, domain: str, model: str) -> dict[str, Any]:
    """APIs of a domain and the size of each catalog rendering (model tokens when possible)."""
    box = make_toolbox(load_domain(folder, domain))
    texts = {level: render_catalog(box, level) for level in LEVELS}
    sizes: dict[str, Any] = {"apis": len(box), "libraries": len(box.libraries)}
    counter = _token_counter(model)
    for level, text in texts.items():
        sizes[f"{level}_chars"] = len(text)
        sizes[f"{level}_tokens"] = counter(text) if counter else None
    return sizes


def _token_counter(model: str) -> Any:
    if not model.startswith("embedded/"):
        return None
    from freyr_dspy.backends import shared_engine

    return shared_engine(model).count_tokens


def rows_from(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (domain, strategy) from the evaluation's records."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in data["records"]:
        groups.setdefault((record["case"], record["strategy"]), []).append(record)
    rows = []
    for (domain, strategy), records in groups.items():
        n = len(records)
        kinds = Counter(r["failure_kind"] for r in records if r["success"] < 1)
        rows.append(
            {
                "domain": domain,
                "strategy": strategy,
                "questions": n,
                "tokens_in": sum(r["input_tokens"] for r in records) / n,
                "lm_calls": sum(r["lm_calls"] for r in records) / n,
                "seconds": sum(r["seconds"] for r in records) / n,
                "routing": sum(r["metrics"].get("routing", 0.0) for r in records) / n,
                "ast": sum(r["metrics"].get("ast", 0.0) for r in records) / n,
                "ast_strict": sum(r["metrics"].get("ast_strict", 0.0) for r in records) / n,
                "largest_prompt": max(_largest_prompt(r) for r in records),
                "context_overflows": kinds.get("context", 0),
                "failure_kinds": dict(kinds),
            }
        )
    return rows


def _largest_prompt(record: dict[str, Any]) -> float:
    """The role with the largest mean prompt (input tokens per LM call) in one step."""
    usage = record["diagnostics"].get("usage") or {}
    return max((tokens / calls for calls, tokens, _ in usage.values() if calls), default=0.0)


COLUMNS = (
    "domain",
    "APIs",
    "catalog tokens full/brief/names",
    "strategy",
    "tok in/q",
    "max prompt",
    "LM calls/q",
    "s/q",
    "routing",
    "AST",
    "AST strict",
    "ctx overflow",
)


def render(rows: list[dict[str, Any]], sizes: dict[str, dict[str, Any]]) -> str:
    return "\n".join(markdown_table(COLUMNS, [_cells(row, sizes[row["domain"]]) for row in rows]))


def _cells(row: dict[str, Any], size: dict[str, Any]) -> list[str]:
    tokens = "/".join(str(size.get(f"{lvl}_tokens") or size[f"{lvl}_chars"] // 4) for lvl in LEVELS)
    return [
        row["domain"],
        str(size["apis"]),
        tokens,
        row["strategy"],
        f"{row['tokens_in']:.0f}",
        f"{row['largest_prompt']:.0f}",
        f"{row['lm_calls']:.1f}",
        f"{row['seconds']:.1f}",
        *(f"{row[k]:.2f}" for k in ("routing", "ast", "ast_strict")),
        f"{row['context_overflows']}/{row['questions']}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="benchmark data dir (default: ../shared/...)")
    parser.add_argument("--domains", default="bank,hr")
    parser.add_argument(
        "--strategies", default=None, help="comma list (default: every strategy the benchmark runs)"
    )
    parser.add_argument("--limit", type=int, default=3, help="questions per domain")
    parser.add_argument("--model", default=None, help="model id (default: the embedded one)")
    parser.add_argument(
        "--sampling",
        action="append",
        default=[],
        help="PARAM=VALUE, repeatable (default: temperature=0, max_tokens=256)",
    )
    parser.add_argument("--out", type=Path, help="write the table rows and all records as JSON")
    args = parser.parse_args(argv)

    settings = Settings.from_env(os.environ, data_dir=args.data)
    data_dir = settings.resolve_data_dir()
    model = args.model or settings.default_model
    benchmark = get_benchmark("callnavi")
    strategies = tuple(args.strategies.split(",")) if args.strategies else benchmark.strategies
    domains = [d.strip() for d in args.domains.split(",") if d.strip()]
    config = EvalConfig(
        benchmarks=("callnavi",),
        data_dir=data_dir,
        strategies=strategies,
        limit=args.limit,
        extra={"domains": domains},
        default_model=model,
        sampling_specs=tuple(args.sampling or ["temperature=0.0", "max_tokens=256"]),
    )
    checkpoint = args.out.with_name(args.out.name + ".checkpoint.jsonl") if args.out else None
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        print(
            f"\r{done}/{total} units, {time.perf_counter() - started:.0f} s",
            end="",
            file=sys.stderr,
            flush=True,
        )

    evaluation = evaluate(config, checkpoint=checkpoint, progress=progress)
    print(file=sys.stderr)
    data = report_data(evaluation)
    folder = callnavi_dir(data_dir)
    sizes = {domain: catalog_sizes(folder, domain, model) for domain in domains}
    rows = rows_from(data)
    print(
        f"model {model}, {args.limit} question(s) per domain, one run, "
        f"sampling {', '.join(config.sampling_specs)}"
    )
    print(render(rows, sizes))
    summary = data["benchmarks"]["callnavi"].get("summary", {})
    if args.out:
        write_json(
            args.out,
            {
                "config": data["config"],
                "catalogs": sizes,
                "rows": rows,
                "summary": summary,
                "records": data["records"],
            },
        )
        print(f"saved {args.out}", file=sys.stderr)
    else:
        print(json.dumps({"catalogs": sizes, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
