"""Where a request's seconds go: strategies side by side on our tool suite and on LLMaker.

For every model, benchmark request and contestant (greedy decoding; one model in the process):
- exact: the benchmark's own success score of the request (the calls, for the suite);
- seconds per request, split into prompt evaluation (the engine's own clock around llama.cpp's
  prompt eval) and the rest (generation, grammar, Python);
- prompt tokens sent, prompt tokens evaluated (the rest came from the prefix cache), output
  tokens, model calls, and seconds per role.

A contestant is a strategy label (``freyr``, ``freyr+abstain``, ``native``) and a mode:
``calls`` stops once the calls are made (``FreyrProgram.forward(calls_only=True)``, what the
suite scores and what a server returns), ``reply`` also writes the reply to the user. Requests
of one toolbox (the episodes of one LLMaker task) run back to back per contestant, as an app
would send them, so each contestant's prefix cache is as warm as it would be in use.

    python scripts/bench_speed.py --model embedded/qwen2.5-coder-1.5b --warm \\
        --out runs/speed_15b.json                                   # suite + LLMaker
    python scripts/bench_speed.py --model embedded/qwen2.5-coder-0.5b --suite-limit 5 \\
        --llmaker-limit 0 --out runs/speed.json
    python scripts/bench_speed.py --out docs/results/data/speed_suite_15b.json --report-only

An ``@variant`` suffix (several joined by ``,``) runs a contestant another way: ``@warmed``
(``FreyrProgram.warm`` before the toolbox's requests, as an app's program that has seen every
tool), ``@compact`` (JSON answers held to one line, ``LlamaCppEngine(compact_json=True)``),
``@grammar-first``
(llama-cpp-python's own grammar sampling, to measure ours against it) or ``@lookupN``
(speculative decoding by prompt lookup, N draft tokens). Each contestant starts with nothing
cached (else it would find the previous contestant's prompts of the same requests); ``--warm``
then runs a toolbox's (a LLMaker task's) first request untimed, as a server that has seen the
toolbox would be, and times the others.

Rows are saved to ``--out`` as they finish; a rerun skips the rows already there (resume).
Prints one markdown table per (model, benchmark) and ratios to native in the same mode.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import (
    add_out_options,
    load_rows,
    markdown_table,
    mean_or_nan,
    median_or_nan,
    save_json,
    save_rows,
)

from freyr_dspy.backends import shared_engine
from freyr_dspy.benchmark import Benchmark, Episode, EvalOptions, get_benchmark
from freyr_dspy.datasets import dataset_benchmark, open_toolboxes
from freyr_dspy.errors import one_line
from freyr_dspy.evaluation import run_episode
from freyr_dspy.program import FreyrProgram, build_assignment, resolve_label
from freyr_dspy.settings import DEFAULT_MODEL, Settings
from freyr_dspy.strategies import make_strategy, parse_label

ROOT = Path(__file__).resolve().parent.parent
SUITE_TOOLS = ROOT / "trainsets" / "calls" / "tools.json"
SUITE_TEST = ROOT / "trainsets" / "calls" / "test.jsonl"
GREEDY = ["temperature=0", "seed=0"]
CONTESTANTS = ("native:calls", "freyr:calls", "freyr+abstain:calls", "native:reply", "freyr:reply")
LLMAKER_CONTESTANTS = ("native:reply", "freyr:reply")


@dataclass(frozen=True)
class Contestant:
    """A strategy label, whether the program stops at the calls, and the engine's decoding."""

    label: str
    calls_only: bool
    #: Comma-separated variants, "" for none: "warmed" (the program warmed for the toolbox
    #: first), "compact" (JSON answers on one line), "grammar-first" (llama-cpp-python's own
    #: grammar sampling), "lookupN" (speculative decoding by prompt lookup, N draft tokens).
    decoding: str = ""

    @classmethod
    def parse(cls, text: str) -> Contestant:
        """``freyr+abstain:calls``, ``native:reply``, ``freyr:calls@compact,warmed``."""
        text, _, decoding = text.partition("@")
        label, _, mode = text.partition(":")
        if mode not in ("", "calls", "reply"):
            raise SystemExit(f"error: {text}: the mode after ':' is calls or reply")
        known = ("warmed", "compact", "grammar-first")
        for variant in filter(None, decoding.split(",")):
            if variant not in known and not re.fullmatch(r"lookup[1-9]\d*", variant):
                raise SystemExit(
                    f"error: @{variant}: a variant is warmed, compact, grammar-first or lookupN"
                )
        return cls(label, mode != "reply", decoding)

    @property
    def variants(self) -> set[str]:
        return set(filter(None, self.decoding.split(",")))

    @property
    def name(self) -> str:
        mode = f"{self.label}:{'calls' if self.calls_only else 'reply'}"
        return f"{mode}@{self.decoding}" if self.decoding else mode

    def prepare_engine(self, model: str) -> None:
        """Put the in-process engine in this contestant's decoding, with no prompt cached."""
        if not model.startswith(("embedded/", "gguf:")):
            return
        engine = shared_engine(model)
        engine.grammar_last = "grammar-first" not in self.variants
        engine.compact_json = "compact" in self.variants
        drafts = [int(v[len("lookup") :]) for v in self.variants if v.startswith("lookup")]
        lookup = drafts[0] if drafts else 0
        if engine.prompt_lookup != lookup:
            engine.prompt_lookup = lookup
            engine.close()  # the draft model is set when the model loads
        engine.forget_prompts()  # else a contestant finds the same request's prompt cached


def suite_benchmark() -> Benchmark:
    """Our tool suite's test file as a benchmark (the calls are recorded, not executed)."""
    return dataset_benchmark(open_toolboxes(tools=SUITE_TOOLS), SUITE_TEST)


def one_tool_benchmark(directory: Path) -> Benchmark:
    """The suite's test requests that need one call, each offered one tool alone.

    ``one-tool``: offered the tool it needs (an app that exposes one function). ``one-tool,
    none fits``: the same request offered the tool of the next such request from another
    toolbox, where the right answer is no call. The rows are written to ``directory``.
    """
    boxes = open_toolboxes(tools=SUITE_TOOLS)
    rows = [json.loads(line) for line in SUITE_TEST.read_text(encoding="utf-8").splitlines()]
    single = [r for r in rows if len(r.get("calls", [])) == 1 and "results" not in r]
    derived = []
    for index, row in enumerate(single):
        tool = boxes[row["toolbox"]].get(row["calls"][0]["name"]).openai_schema()
        other = next(
            r for r in single[index + 1 :] + single[:index] if r["toolbox"] != row["toolbox"]
        )
        unfit = boxes[other["toolbox"]].get(other["calls"][0]["name"]).openai_schema()
        common = {"message": row["message"], "toolbox": row["toolbox"]}
        derived.append(
            {
                "id": f"{row['id']}-alone",
                "category": "one-tool",
                "calls": row["calls"],
                "tools": [tool],
                **common,
            }
        )
        derived.append(
            {
                "id": f"{row['id']}-unfit",
                "category": "one-tool, none fits",
                "calls": [],
                "tools": [unfit],
                **common,
            }
        )
    path = directory / "one_tool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in derived), encoding="utf-8")
    return dataset_benchmark(boxes, path)


def spread(episodes: list[Episode], limit: int | None, group: Any) -> list[Episode]:
    """At most ``limit`` episodes per group (category, for the suite), in file order."""
    if not limit:
        return episodes
    taken: dict[str, int] = {}
    kept = []
    for episode in episodes:
        key = group(episode)
        if taken.get(key, 0) < limit:
            taken[key] = taken.get(key, 0) + 1
            kept.append(episode)
    return kept


def toolbox_key(episode: Episode) -> str:
    """The toolbox a suite episode's request offers (requests of one run back to back)."""
    box = episode.steps[0].toolbox
    return ",".join(box.names) if box is not None else ""


def build(benchmark: Benchmark, options: EvalOptions, label: str, model: str) -> FreyrProgram:
    """The benchmark's program for ``label``, its switches on, every role on ``model``.

    ``preset`` (maybe with switches: ``preset+lone_tool``) is the model's preset.
    """
    name, switches = parse_label(resolve_label(label, model))
    program = benchmark.make_program(name, options)
    if switches:
        program.use_strategy(make_strategy(name, **switches))
    program.apply_assignment(
        build_assignment(program.role_names, default_model=model, sampling_specs=GREEDY)
    )
    return program


class _NoEngine:
    """A model served elsewhere: no prompt clock, no evaluated-token counter."""

    prompt_seconds = 0.0
    prompt_tokens_evaluated = 0


def in_process_engine(model: str) -> Any:
    """The llama.cpp engine of an embedded or ``gguf:`` model, else a stand-in reading 0."""
    in_process = model.startswith(("embedded/", "gguf:"))
    return shared_engine(model) if in_process else _NoEngine()


def measure_episode(
    benchmark: Benchmark, program: FreyrProgram, episode: Episode, contestant: Contestant
) -> Iterator[dict[str, Any]]:
    """Run each step of ``episode`` from its own start state, as the evaluation runner does."""
    engine = in_process_engine(program.assignment[program.role_names[0]].model)
    for step in episode.steps:
        alone = replace(episode, steps=(replace(step, calls_only=contestant.calls_only),))
        prompt_seconds, evaluated = engine.prompt_seconds, engine.prompt_tokens_evaluated
        started = time.perf_counter()
        [record] = run_episode(benchmark, program, alone)
        seconds = time.perf_counter() - started
        yield {
            "step": step.id,
            "case": episode.case,
            "exact": record.success,
            "calls": [[c["tool"], c["arguments"]] for c in record.calls],
            "seconds": round(seconds, 3),
            "prompt_seconds": round(engine.prompt_seconds - prompt_seconds, 3),
            "tokens_sent": record.input_tokens,
            # Scoring (calibrate) evaluates outside the completion counter: counted as sent.
            "tokens_evaluated": engine.prompt_tokens_evaluated - evaluated,
            "output_tokens": record.output_tokens,
            "lm_calls": record.lm_calls,
            "roles": record.role_seconds,
        }


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run every missing row, saving after each episode."""
    rows = load_rows(args.out)
    done = {(r["model"], r["benchmark"], r["contestant"], r["step"]) for r in rows}
    options = EvalOptions(data_dir=args.data, mode="bootstrap")
    for bench_name, benchmark, episodes, contestants in plan(args, options):
        groups: dict[str, list[Episode]] = {}
        for episode in episodes:
            key = episode.case if bench_name == "llmaker" else toolbox_key(episode)  # the task
            groups.setdefault(key, []).append(episode)
        for group in groups.values():
            for contestant in contestants:
                # With --warm the toolbox's first request warms the cache and is not timed.
                timed = group[1:] if args.warm else group
                todo = [
                    episode
                    for episode in timed
                    if not all(
                        (args.model, bench_name, contestant.name, s.id) in done
                        for s in episode.steps
                    )
                ]
                if not todo:
                    continue
                program = build(benchmark, options, contestant.label, args.model)
                contestant.prepare_engine(args.model)
                if "warmed" in contestant.variants:
                    program.warm(toolbox=group[0].steps[0].toolbox)
                if args.warm:
                    list(measure_episode(benchmark, program, group[0], contestant))
                for episode in todo:
                    try:
                        measured = list(measure_episode(benchmark, program, episode, contestant))
                    except Exception as exc:  # recorded as a failed row; the bench goes on
                        traceback.print_exc()
                        measured = [
                            {
                                "step": episode.steps[0].id,
                                "case": episode.case,
                                "error": one_line(exc, limit=None, typed=True),
                            }
                        ]
                    for row in measured:
                        row.update(
                            model=args.model, benchmark=bench_name, contestant=contestant.name
                        )
                        rows.append(row)
                        print(
                            f"{bench_name} {contestant.name:22} {row['step']:28} "
                            f"{row.get('exact', 'error')} {row.get('seconds', '')}",
                            file=sys.stderr,
                            flush=True,
                        )
                    save_rows(args.out, __doc__.splitlines()[0], rows)
    return rows


def plan(
    args: argparse.Namespace, options: EvalOptions
) -> Iterator[tuple[str, Benchmark, list[Episode], list[Contestant]]]:
    if args.suite_limit != 0:
        name = "one-tool" if args.one_tool else "suite"
        suite = one_tool_benchmark(args.out.parent) if args.one_tool else suite_benchmark()
        episodes = spread(suite.episodes(options), args.suite_limit, lambda e: e.case)
        yield name, suite, episodes, [Contestant.parse(c) for c in args.contestants.split(",")]
    if args.llmaker_limit != 0:
        llmaker = get_benchmark("llmaker")
        episodes = llmaker.episodes(options)[: args.llmaker_limit]
        contestants = [Contestant.parse(c) for c in args.llmaker_contestants.split(",")]
        yield "llmaker", llmaker, episodes, contestants


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One table row: accuracy and the medians of time and tokens."""
    scored = [r for r in rows if "error" not in r]
    out: dict[str, Any] = {"n": len(rows), "errors": len(rows) - len(scored)}
    out["exact"] = mean_or_nan(r["exact"] for r in scored)
    for field in (
        "seconds",
        "prompt_seconds",
        "tokens_sent",
        "tokens_evaluated",
        "output_tokens",
        "lm_calls",
    ):
        out[field] = median_or_nan(r[field] for r in scored)
    out["other_seconds"] = median_or_nan(r["seconds"] - r["prompt_seconds"] for r in scored)
    out["mean_seconds"] = mean_or_nan(r["seconds"] for r in scored)
    roles: dict[str, list[float]] = {}
    for r in scored:
        for role, seconds in r["roles"].items():
            roles.setdefault(role, []).append(seconds)
    out["role_seconds"] = {role: round(statistics.mean(v), 2) for role, v in roles.items()}
    return out


def paired_steps(rows: list[dict[str, Any]], names: list[str]) -> set[str]:
    """The steps every contestant finished: ratios compare the same requests."""
    per = [{r["step"] for r in rows if r["contestant"] == n and "error" not in r} for n in names]
    return set.intersection(*per) if per else set()


def table(rows: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """One markdown table per (model, benchmark), on the requests every contestant finished."""
    lines, summaries = [], {}
    for model in dict.fromkeys(r["model"] for r in rows):
        for bench in dict.fromkeys(r["benchmark"] for r in rows if r["model"] == model):
            mine = [r for r in rows if r["model"] == model and r["benchmark"] == bench]
            names = list(dict.fromkeys(r["contestant"] for r in mine))
            steps = paired_steps(mine, names)
            stats = {
                n: summary([r for r in mine if r["contestant"] == n and r["step"] in steps])
                for n in names
            }
            summaries[f"{model} {bench}"] = stats
            lines.append(
                f"\n{model}, {bench}: {len(steps)} requests every contestant finished (medians)\n"
            )
            lines += markdown_table(COLUMNS, [_row(name, stats) for name in stats])
            cases = list(dict.fromkeys(r["case"] for r in mine))
            if bench == "one-tool" and len(cases) > 1:
                for case in cases:
                    in_case = {r["step"] for r in mine if r["case"] == case} & steps
                    stats = {
                        n: summary(
                            [r for r in mine if r["contestant"] == n and r["step"] in in_case]
                        )
                        for n in names
                    }
                    summaries[f"{model} {bench} {case}"] = stats
                    lines.append(f"\n{model}, {bench}, {case}: {len(in_case)} requests\n")
                    lines += markdown_table(COLUMNS, [_row(name, stats) for name in stats])
    return "\n".join(lines), summaries


COLUMNS = (
    "contestant",
    "exact",
    "s/request",
    "× native",
    "prompt eval s",
    "rest s",
    "tokens sent",
    "evaluated",
    "× native sent",
    "output tokens",
    "model calls",
    "mean s per role",
)


def _row(name: str, stats: dict[str, Any]) -> list[str]:
    """A contestant's medians over native's in the same mode (and decoding, if native ran it)."""
    st = stats[name]
    mode = name.split(":")[1]  # "calls" or "reply", maybe with "@decoding"
    native = stats.get(f"native:{mode}") or stats.get(f"native:{mode.partition('@')[0]}")
    return [
        name,
        f"{st['exact']:.2f}",
        f"{st['seconds']:.2f}",
        f"{st['seconds'] / native['seconds']:.2f}" if native else "-",
        f"{st['prompt_seconds']:.2f}",
        f"{st['other_seconds']:.2f}",
        f"{st['tokens_sent']:.0f}",
        f"{st['tokens_evaluated']:.0f}",
        f"{st['tokens_sent'] / native['tokens_sent']:.2f}" if native else "-",
        f"{st['output_tokens']:.0f}",
        f"{st['lm_calls']:.0f}",
        ", ".join(f"{k} {v}" for k, v in st["role_seconds"].items()),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument(
        "--contestants",
        default=",".join(CONTESTANTS),
        help="suite contestants: LABEL[:calls|:reply], comma-separated",
    )
    parser.add_argument("--llmaker-contestants", default=",".join(LLMAKER_CONTESTANTS))
    parser.add_argument(
        "--suite-limit",
        type=int,
        default=4,
        help="requests per suite category (0: skip the suite; -1: all)",
    )
    parser.add_argument(
        "--llmaker-limit",
        type=int,
        default=4,
        help="LLMaker episodes, all their steps (0: skip LLMaker; -1: all)",
    )
    parser.add_argument("--data", type=Path, default=None, help="benchmark data directory")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="run a toolbox's first request untimed, then time the others "
        "(an app's steady state: the toolbox's prompts are in the prefix cache)",
    )
    parser.add_argument(
        "--one-tool",
        action="store_true",
        help="the suite's one-call requests, each offered one tool alone: the tool it needs, "
        "and another toolbox's (no call is right)",
    )
    add_out_options(parser, default=None)
    args = parser.parse_args()
    args.data = args.data or Settings().resolve_data_dir()
    for name in ("suite_limit", "llmaker_limit"):
        if getattr(args, name) < 0:
            setattr(args, name, None)
    rows = load_rows(args.out, missing_ok=False) if args.report_only else run(args)
    text, summaries = table(rows)
    print(text)
    document = json.loads(args.out.read_text(encoding="utf-8"))
    document["summary"] = summaries
    save_json(args.out, document, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
