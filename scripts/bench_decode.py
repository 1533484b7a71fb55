"""What evaluating several tokens at once costs llama.cpp on this machine, against one at a time.

A request's seconds are almost all llama.cpp's decoding (the rest - DSPy, the grammar check,
saving prefix states - was under a twentieth in a profile of ``scripts/bench_speed.py``), so
they follow the tokens evaluated. Two ways to cut them evaluate tokens in batches during
generation: speculative decoding checks k drafted tokens in one batch (and needs every
position's logits), and jumping over tokens a grammar forces evaluates them in one batch (only
the last position's logits). Either pays only if a batch of k tokens costs much less than k
single steps. This script measures that ratio: after the same chat prompt, it times one
``llama_decode`` of k tokens, with logits for the last position and for all of them.

    python scripts/bench_decode.py --model embedded/qwen2.5-coder-1.5b --out runs/decode_15b.json
    python scripts/bench_decode.py --out runs/decode_15b.json --report-only

``× k steps`` is a batch's median seconds over k times a one-token step's: 1.00 means a batch
saves nothing, 1/k that it costs one step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import add_out_options, load_rows, markdown_table, save_rows

from freyr_dspy.backends import shared_engine

ABOUT = "Seconds of one llama_decode of k tokens after a chat prompt, logits for last or all."
#: A suite-sized request, so the batches attend over a realistic context.
PROMPT = (
    "<|im_start|>system\nYou choose tools for the user and answer in JSON.<|im_end|>\n"
    "<|im_start|>user\nWhat is the weather in Oslo and in Paris tomorrow, in celsius?"
    "<|im_end|>\n<|im_start|>assistant\n"
)
#: What a parameters answer looks like: the tokens evaluated in the batches.
ANSWER = '{\n  "arguments": {\n    "city": "Oslo",\n    "unit": "celsius",\n    "days": 1\n  }\n}'
BATCHES = (1, 2, 4, 8, 16)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.report_only:
        if not args.model:
            sys.exit("error: --model is needed to measure (or --report-only)")
        rows = [r for r in load_rows(args.out) if r["model"] != args.model]
        rows += measure(args.model, sorted({1, *args.batches}), args.repeats)
        save_rows(args.out, ABOUT, rows)
    print("\n".join(report(load_rows(args.out, missing_ok=False))))
    return 0


def measure(model: str, batches: Sequence[int], repeats: int) -> list[dict[str, Any]]:
    """Median seconds of a decode of each batch size, logits for the last and for all tokens."""
    from llama_cpp import Llama

    path = shared_engine(model).model_path
    llama = Llama(model_path=path, n_ctx=1024, n_threads=os.cpu_count(), verbose=False)
    prompt = llama.tokenize(PROMPT.encode(), special=True)
    answer = llama.tokenize(ANSWER.encode(), add_bos=False)
    if max(batches) > len(answer):
        sys.exit(f"error: the largest batch is {len(answer)} tokens")
    llama.eval(prompt)
    rows = []
    for size in batches:
        for every_position in (False, True):
            batch = answer[:size]
            times = [_decode(llama, len(prompt), batch, every_position) for _ in range(1 + repeats)]
            rows.append(
                {
                    "model": model,
                    "tokens": size,
                    "logits": "all" if every_position else "last",
                    "seconds": statistics.median(times[1:]),  # the first run warms the buffers
                }
            )
    return rows


def _decode(llama: Any, past: int, tokens: list[int], every_position: bool) -> float:
    """Seconds of one decode of ``tokens`` after the first ``past`` (the rest is dropped first)."""
    llama._ctx.kv_cache_seq_rm(-1, past, -1)
    llama._batch.set_batch(batch=tokens, n_past=past, logits_all=every_position)
    started = time.perf_counter()
    llama._ctx.decode(llama._batch)
    return time.perf_counter() - started


def report(rows: list[dict[str, Any]]) -> list[str]:
    """One table per model: ms per batch and its ratio to as many one-token steps."""
    lines: list[str] = []
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        step = {r["logits"]: r["seconds"] for r in mine if r["tokens"] == 1}
        table = []
        for size in sorted({r["tokens"] for r in mine}):
            cells: list[object] = [size]
            for logits in ("last", "all"):
                seconds = next(
                    r["seconds"] for r in mine if (r["tokens"], r["logits"]) == (size, logits)
                )
                cells += [f"{1000 * seconds:.1f}", f"{seconds / (size * step[logits]):.2f}"]
            table.append(cells)
        columns = ["tokens", "ms, last logits", "x k steps", "ms, all logits", "x k steps"]
        lines += [f"\n{model}: one decode of k tokens (medians)\n", *markdown_table(columns, table)]
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="embedded/... or gguf:PATH (an in-process model)")
    parser.add_argument(
        "--batches",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=BATCHES,
        help="batch sizes, comma-separated (default: 1,2,4,8,16; 1 is always measured)",
    )
    parser.add_argument("--repeats", type=int, default=7)
    add_out_options(parser, None)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
