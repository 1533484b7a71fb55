"""How sure a scored ``confirm`` verdict must be: the planned tools kept right, per margin.

``scored_confirm`` keeps a planned tool when ``log P(true) - log P(false)`` is at least a
margin (``scored_confirm.CONFIRM_MARGIN``). This script replays the choice of that margin on a
labelled examples file - a *training* file, never the file results are reported on: for every
request, the intent role plans (greedy, as the strategy would, ``calibrate`` included when the
strategy label has it), then the plan's tools are judged with the ``confirm`` role's written
verdicts and with scored verdicts at each margin.

A request's verdicts are right when the tools kept are exactly the planned tools the request
asks for (its expected calls' tools): the most a check of that plan can get right. Plans of
one tool (checked only with ``abstain``) and of several are counted apart, since a margin
that suits one may not suit the other.

    python scripts/bench_margin.py --model embedded/qwen2.5-coder-1.5b \\
        --tools trainsets/calls/tools.json --examples trainsets/calls/train.jsonl \\
        --out runs/margin_15b.json
    python scripts/bench_margin.py --out runs/margin_15b.json --report-only

Rows are saved to ``--out`` as they finish; a rerun skips the rows already there (resume).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

from _bench import add_out_options, load_rows, markdown_table, save_rows

from freyr_dspy.datasets import CallExample, load_examples, open_toolboxes, toolbox_of
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import Run

# NOTE: the steps of FREYR's planning, called one by one to judge one plan many ways; no
# public API offers them (tests/scripts/test_scripts_public_api.py lists this exception).
from freyr_dspy.strategies._freyr import CONVERSATION, confirm_intents, recognise_intents
from freyr_dspy.strategies._scored_confirm import scored_verdicts
from freyr_dspy.tools import Toolbox

ABOUT = "Planned tools kept right by confirm's written verdicts and by scored ones per margin."
MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.report_only:
        if not (args.model and args.examples):
            sys.exit("error: --model and --examples are needed to measure (or --report-only)")
        measure(args)
    print("\n".join(report(load_rows(args.out, missing_ok=False), args.margins)))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the model every role runs on")
    parser.add_argument("--strategy", default="freyr", help="freyr, or with +calibrate")
    parser.add_argument("--tools", type=Path, help="JSON file of OpenAI tool dicts")
    parser.add_argument("--examples", type=Path, help="labelled JSONL examples (a trainset)")
    parser.add_argument(
        "--margins", type=_margins, default=MARGINS, help="comma-separated, e.g. 0,0.5,1"
    )
    add_out_options(parser, None)
    return parser


def _margins(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(item) for item in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"margins are numbers, got {text!r}") from None


def measure(args: argparse.Namespace) -> None:
    """Judge every example's plan not judged yet in ``args.out``, saving after each."""
    rows = load_rows(args.out)
    done = {row["id"] for row in rows}
    boxes = open_toolboxes(args.tools)
    programs: dict[int, FreyrProgram] = {}
    for example in load_examples(args.examples):
        if example.id in done or not example.labelled:
            continue
        toolbox = toolbox_of(example, boxes)
        if id(toolbox) not in programs:
            programs[id(toolbox)] = _program(toolbox, args.model, args.strategy)
        rows.append(judged(programs[id(toolbox)], example, args.margins))
        save_rows(args.out, ABOUT, rows)
        print(_progress(rows[-1]), flush=True)


def _program(toolbox: Toolbox, model: str, strategy: str) -> FreyrProgram:
    greedy = {"temperature": 0.0, "seed": 0}
    return FreyrProgram.for_model(model, toolbox=toolbox, strategy=strategy, sampling=greedy)


def judged(program: FreyrProgram, example: CallExample, margins: Sequence[float]) -> dict[str, Any]:
    """The example's plan and the tools each way of judging it keeps."""
    calibrate = bool(program.strategy.config().get("calibrate"))
    row: dict[str, Any] = {
        "id": example.id,
        "category": example.kind,
        "asked": sorted({call.name for call in example.calls or []}),
    }

    strategy = program.strategy

    def judge(run: Run) -> Any:
        plan, _ = recognise_intents(run, strategy.intent, calibrate=calibrate)
        tools = list(dict.fromkeys(name for name in plan if name != CONVERSATION))
        row.update(plan=plan, tools=tools)
        if tools:
            # written verdicts
            row["written"] = confirm_intents(run, strategy.confirm, tools, abstain=True)
            row["scored"] = {
                str(margin): _kept(
                    tools, scored_verdicts(run, strategy.confirm, tools, margin=margin)
                )
                for margin in margins
            }
        return run.result("", plan)

    run = program.start_run(example.message, example.conversation_turns(), example.state)
    program.run_step(run, judge)
    return row


def _kept(tools: list[str], verdicts: dict[str, bool] | None) -> list[str] | None:
    """The tools the verdicts keep (one with no verdict is kept, as ``confirm`` keeps it)."""
    return None if verdicts is None else [tool for tool in tools if verdicts.get(tool, True)]


def _progress(row: dict[str, Any]) -> str:
    return f"{row['id']:<36} plan {row.get('tools')} asked {row['asked']}"


def right(row: dict[str, Any], kept: list[str] | None) -> bool:
    """Whether ``kept`` is exactly the planned tools the request asks for."""
    return kept is not None and set(kept) == set(row["tools"]) & set(row["asked"])


def report(rows: list[dict[str, Any]], margins: Sequence[float]) -> list[str]:
    """One line per way of judging: plans of one tool, of several, and all, judged right."""
    judged_rows = [row for row in rows if row.get("tools")]
    groups = {
        "one tool": [row for row in judged_rows if len(row["tools"]) == 1],
        "several tools": [row for row in judged_rows if len(row["tools"]) > 1],
        "all": judged_rows,
    }
    ways: list[tuple[str, Any]] = [("written", lambda row: row["written"])]
    ways += [
        (f"scored, margin {m:g}", lambda row, m=m: row["scored"].get(str(m)))
        for m in margins
        if all(str(m) in row["scored"] for row in judged_rows)
    ]
    lines = [f"{len(rows)} requests, {len(judged_rows)} planned a tool (verdicts right / plans)"]
    columns = ["verdicts", *(f"{name} ({len(group)})" for name, group in groups.items())]
    table = [
        [way, *(sum(right(row, kept(row)) for row in group) for group in groups.values())]
        for way, kept in ways
    ]
    return [*lines, "", *markdown_table(columns, table)]


if __name__ == "__main__":
    sys.exit(main())
