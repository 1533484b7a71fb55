"""Does compiling help? Held-out test score and tokens per request, same model, one run.

Rows: the uncompiled program, the compiled artifact(s), and the ``native`` tool-calling
baseline, all on the benchmark's own test episodes (never trained on) and the same model.

    python scripts/bench_compile.py --benchmark llmaker --artifact compiled/llmaker.json \
        --limit 20 --out runs/bench_compile_llmaker.json

Prints a markdown table; ``--out`` also writes every step record as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import markdown_table, save_json

from freyr_dspy.artifacts import benchmark_data_dir, load, read_artifact
from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.evaluation import StepRecord, parse_benchmark_options, run_episode
from freyr_dspy.program import FreyrProgram, build_assignment
from freyr_dspy.settings import Settings


def measure(benchmark: Any, program: FreyrProgram, episodes: list[Any]) -> dict[str, Any]:
    started = time.perf_counter()
    records: list[StepRecord] = []
    for episode in episodes:
        records.extend(run_episode(benchmark, program, episode))
        print(
            f"  {episode.id}: {[r.success for r in records[-len(episode.steps) :]]}",
            file=sys.stderr,
            flush=True,
        )
    n = len(records) or 1
    return {
        "steps": len(records),
        "success": round(sum(r.success for r in records) / n, 3),
        "intents": round(sum(r.metrics.get("intents", 0.0) for r in records) / n, 3),
        "tokens_per_request": round(sum(r.input_tokens + r.output_tokens for r in records) / n, 1),
        "input_tokens_per_request": round(sum(r.input_tokens for r in records) / n, 1),
        "lm_calls_per_request": round(sum(r.lm_calls for r in records) / n, 2),
        "seconds": round(time.perf_counter() - started, 1),
        "failures": dict(Counter(r.failure_kind for r in records if r.failure_kind)),
        "records": [r.to_json() for r in records],
    }


def fresh(
    benchmark: Any, strategy: str, options: EvalOptions, model: str, sampling: list[str]
) -> FreyrProgram:
    program = benchmark.make_program(strategy, options)
    roles = program.role_names
    specs = [s for s in sampling if "." not in s.split("=")[0] or s.split(".")[0] in roles]
    program.apply_assignment(build_assignment(roles, default_model=model, sampling_specs=specs))
    return program


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="llmaker")
    parser.add_argument("--artifact", action="append", default=[], help="repeatable")
    parser.add_argument("--model", default=None, help="default: the artifact's / settings'")
    parser.add_argument("--strategy", default="freyr")
    parser.add_argument(
        "--baseline",
        action="append",
        default=None,
        help="baseline strategies (default: native; 'none' for no baseline)",
    )
    parser.add_argument("--limit", type=int, default=None, help="first N test episodes")
    parser.add_argument("--mode", default="bootstrap")
    parser.add_argument(
        "--sampling",
        action="append",
        default=[],
        help="[ROLE.]PARAM=VALUE for the uncompiled and baseline programs",
    )
    parser.add_argument("--option", action="append", default=[], help="benchmark KEY=VALUE")
    parser.add_argument(
        "--only-artifacts",
        action="store_true",
        help="measure only the artifacts (no uncompiled row, no baselines)",
    )
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    settings = Settings.from_env(os.environ, data_dir=args.data)
    benchmark = get_benchmark(args.benchmark)
    options = EvalOptions(
        data_dir=benchmark_data_dir(settings),
        mode=args.mode,
        limit=args.limit,
        extra=parse_benchmark_options(args.option),
    )
    episodes = benchmark.episodes(options)
    model = args.model or settings.default_model
    rows: dict[str, dict[str, Any]] = {}
    if not args.only_artifacts:
        print(f"uncompiled {args.strategy}", file=sys.stderr)
        rows[f"{args.strategy} (uncompiled)"] = measure(
            benchmark, fresh(benchmark, args.strategy, options, model, args.sampling), episodes
        )
    for path in args.artifact:
        meta, _ = read_artifact(path, settings=settings)
        label = f"{meta.program.strategy} compiled ({Path(path).name})"
        print(label, file=sys.stderr)
        rows[label] = measure(benchmark, load(path, settings=settings, models=args.model), episodes)
        rows[label]["optimizer"] = meta.optimizer.model_dump() if meta.optimizer else None
    baselines = [] if args.only_artifacts else args.baseline or ["native"]
    for baseline in [b for b in baselines if b != "none"]:
        print(f"baseline {baseline}", file=sys.stderr)
        rows[baseline] = measure(
            benchmark, fresh(benchmark, baseline, options, model, args.sampling), episodes
        )

    print(f"\n{args.benchmark}, model {model}, {len(episodes)} test episodes, one run\n")
    print("\n".join(markdown_table(COLUMNS, [_cells(label, row) for label, row in rows.items()])))
    if args.out:
        save_json(args.out, {"benchmark": args.benchmark, "model": model, "rows": rows}, indent=1)
    return 0


COLUMNS = (
    "program",
    "success",
    "intents ok",
    "tokens/request",
    "input tokens",
    "LM calls",
    "seconds",
    "failures",
)


def _cells(label: str, row: dict[str, Any]) -> list[str]:
    return [
        label,
        f"{row['success']:.3f}",
        f"{row['intents']:.3f}",
        f"{row['tokens_per_request']:.0f}",
        f"{row['input_tokens_per_request']:.0f}",
        f"{row['lm_calls_per_request']:.2f}",
        f"{row['seconds']:.0f}",
        str(row["failures"]),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
