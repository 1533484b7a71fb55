"""Does mixing models per role beat one model for all roles? A small real search says.

Runs a model-assignment search over the embedded models (SmolLM2-135M, Qwen2.5-Coder 0.5B/1.5B) on a
few dev episodes, with every single-model assignment queued so it is always measured, then
prints the Pareto front and the best single-model vs the best mixed assignment, and writes
everything as JSON. By default sampling is greedy and fixed so that only the role -> model
assignment varies; repeats are cache hits. ``--strategy``, ``--temperature``, ``--top-p`` and
``--max-retries`` widen the space (strategy and sampling searched too).

    python scripts/bench_search.py --benchmark todo --limit 3 --trials 12
    python scripts/bench_search.py --benchmark llmaker --limit 10 --trials 24 \
        --strategy freyr,native --temperature 0,1 --top-p 0.5,1 --objectives accuracy,tokens,latency

Latency is LM seconds per step on this machine and moves with its load; tokens and accuracy
do not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

import optuna
from _bench import save_json

from freyr_dspy.artifacts import benchmark_data_dir
from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.search import (
    SearchSpace,
    baseline,
    enqueue,
    format_table,
    open_storage,
    parse_bounds,
    search_assignments,
    space_digest,
)
from freyr_dspy.settings import Settings

MODELS = "embedded/smollm2-135m,embedded/qwen2.5-coder-0.5b,embedded/qwen2.5-coder-1.5b"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="todo")
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--limit", type=int, default=3, help="episodes evaluated per trial")
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--models", default=MODELS)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--strategy", default="freyr", help="strategies to choose from, A,B")
    parser.add_argument("--temperature", default="0,0", help="LOW,HIGH (0.1 grid) or 'off'")
    parser.add_argument("--top-p", default="off", help="LOW,HIGH (0.05 grid) or 'off'")
    parser.add_argument("--max-retries", default="1,1", help="LOW,HIGH retries of a failed call")
    parser.add_argument("--objectives", default="accuracy,tokens")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/bench_search"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    models = tuple(m.strip() for m in args.models.split(",") if m.strip())
    settings = Settings(project_dir=Path.cwd(), seed=args.seed)
    bench = get_benchmark(args.benchmark)
    options = EvalOptions(data_dir=benchmark_data_dir(settings), limit=args.limit)
    retries = parse_bounds(args.max_retries, "max-retries") or (1, 1)
    space = SearchSpace(
        candidates={"*": models},
        strategies=tuple(s.strip() for s in args.strategy.split(",") if s.strip()),
        temperature=parse_bounds(args.temperature, "temperature"),
        top_p=parse_bounds(args.top_p, "top-p"),
        top_k=None,
        max_retries=(int(retries[0]), int(retries[1])),
        shared_sampling=True,
        max_tokens=args.max_tokens,
        seed=args.seed,
    )
    name = f"bench-{args.benchmark}-{args.split}-{args.limit}-s{args.seed}-{space_digest(space)}"
    storage = args.out / "study.journal"
    common: dict[str, Any] = dict(
        seed=args.seed,
        storage=storage,
        study_name=name,
        objectives=tuple(o.strip() for o in args.objectives.split(",") if o.strip()),
        split=args.split,
        options=options,
        settings=settings,
        out_dir=args.out,
    )
    started = time.perf_counter()
    search_assignments(bench, space, n_trials=1, report=False, **common)  # baseline: models[0]
    queue_single_model_assignments(storage, name, space, models)
    result = search_assignments(bench, space, n_trials=args.trials, **common)
    summary = compare(result, models)
    summary.update(
        command=" ".join(["python", *sys.argv]),
        seconds=time.perf_counter() - started,
        pareto_table=format_table(result),
    )
    print(format_table(result))
    print()
    print(render_comparison(summary))
    save_json(args.out / "bench_search.json", {**summary, "search": result.to_json()})
    print(f"\nwrote {args.out / 'bench_search.json'} ({summary['seconds']:.0f} s)")
    return 0


def queue_single_model_assignments(
    storage: Path, name: str, space: SearchSpace, models: tuple[str, ...]
) -> None:
    """Queue 'model M for every role' for each M so the comparison is always measured."""
    study = optuna.load_study(study_name=name, storage=open_storage(storage))
    for model in models[1:]:
        ordered = (model, *(m for m in models if m != model))
        _, params = baseline(replace(space, candidates={"*": ordered}))
        enqueue(study, params, skip_if_exists=True)


def compare(result: Any, models: tuple[str, ...]) -> dict[str, Any]:
    """Best single-model and best mixed assignment among the completed trials."""
    done, seen = [], set()
    for trial in (t for t in result.trials if t.state == "COMPLETE"):
        if _key(trial) not in seen:  # repeats are cache hits of the first evaluation
            seen.add(_key(trial))
            done.append(trial)
    singles = [t for t in done if len(_models(t)) == 1]
    mixed = [t for t in done if len(_models(t)) > 1]
    best_single = min(singles, key=result.sort_key) if singles else None
    best_mixed = min(mixed, key=result.sort_key) if mixed else None
    rows = {f"{t.trial_config().strategy}, all {next(iter(_models(t)))}": _row(t) for t in singles}
    verdict = None
    if best_single and best_mixed:
        gain = best_mixed.values["accuracy"] - best_single.values["accuracy"]
        verdict = {
            "accuracy_gain": round(gain, 4),
            "wins_on_accuracy": gain > 0,
            "cheaper_at_equal_accuracy": gain == 0
            and best_mixed.values["tokens"] < best_single.values["tokens"],
            "best_accuracy": max(t.values["accuracy"] for t in done),
        }
    front = {_key(t) for t in result.pareto}
    mixed_on_front = [_row(t) for t in mixed if _key(t) in front]
    return {
        "models": list(models),
        "mixed_on_pareto_front": mixed_on_front,
        "single_models": rows,
        "best_single": _row(best_single) if best_single else None,
        "best_mixed": _row(best_mixed) if best_mixed else None,
        "verdict": verdict,
        "distinct_configurations": len(done),
        "completed": sum(t.state == "COMPLETE" for t in result.trials),
        "cache_hits": sum(t.cached for t in result.trials),
    }


def render_comparison(summary: dict[str, Any]) -> str:
    entries = [(k, v) for k, v in summary["single_models"].items()]
    if summary["best_mixed"]:
        best = summary["best_mixed"]
        entries.append((f"best mixed: {best['strategy']}, {best['models']}", best))
    width = max(len("assignment"), *(len(label) for label, _ in entries))
    lines = [f"{'assignment':<{width}} {'accuracy':>8} {'tokens':>8} {'latency':>8}  trial"]
    for label, row in entries:
        lines.append(
            f"{label:<{width}} {row['accuracy']:>8.3f} {row['tokens']:>8.0f} "
            f"{row['latency']:>8.2f}  {row['trial']}"
        )
    front = summary["mixed_on_pareto_front"]
    lines.append(
        f"mixed assignments on the Pareto front: {len(front)}"
        + "".join(f"\n  trial {r['trial']}: {r['models']}" for r in front)
    )
    verdict = summary["verdict"]
    if verdict:
        single, mixed = summary["best_single"], summary["best_mixed"]
        lines.append(
            f"mixing beats the best single model on accuracy: "
            f"{'yes' if verdict['wins_on_accuracy'] else 'no'} ({verdict['accuracy_gain']:+.3f}; "
            f"best accuracy of any configuration {verdict['best_accuracy']:.3f})"
        )
        lines.append(
            f"at equal accuracy, mixing uses fewer tokens: "
            f"{'yes' if verdict['cheaper_at_equal_accuracy'] else 'no'} "
            f"({mixed['tokens']:.0f} vs {single['tokens']:.0f} tokens per step)"
        )
    return "\n".join(lines)


def _models(trial: Any) -> set[str]:
    return {spec["model"] for spec in trial.config["assignment"].values()}


def _key(trial: Any) -> str:
    return json.dumps(trial.config, sort_keys=True)


def _row(trial: Any) -> dict[str, Any]:
    config = trial.trial_config()
    evaluation = trial.evaluation or {}
    return {
        "trial": trial.number,
        "accuracy": trial.values["accuracy"],
        "tokens": trial.values["tokens"],
        "latency": evaluation.get("latency", 0.0),
        "strategy": config.strategy,
        "models": config.models_text(),
        "cached": trial.cached,
    }


if __name__ == "__main__":
    raise SystemExit(main())
