"""Rewrite trainset labels so they name tools by catalog position (``{{name:N}}``).

The project commits its trainsets but not the benchmark data; the tool, API and parameter
names its labels need are the data's, so the files hold their positions instead and the
loaders fill them in from the data directory. Write new rows with plain names (the loaders
accept both), then run this before committing:

    python scripts/refer_trainset_names.py [--data DIR] [--check]

``--check`` changes nothing and exits 1 when a label still spells a name. Only labels are
rewritten (NLT ``expected_tools``; CallNavi ``ground_truth`` API names and parameter keys):
the messages are ours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.benchmarks.callnavi import callnavi_dir, load_domain
from freyr_dspy.errors import DataError
from freyr_dspy.program import REFERENCE
from freyr_dspy.settings import Settings

Relabel = Callable[[dict[str, Any]], dict[str, Any]]


def reference(name: str, names: list[str]) -> str:
    """``{{name:N}}`` for a plain name; a reference stays as it is.

    Raises:
        ValueError: for a name the catalog does not have.
    """
    if REFERENCE.fullmatch(name):
        return name
    if name not in names:
        raise ValueError(f"unknown name {name!r}")
    return f"{{{{name:{names.index(name)}}}}}"


def nlt_relabel(data_dir: Path, scenario: str) -> Relabel:
    topics = get_benchmark(f"nlt-{scenario}").load(EvalOptions(data_dir=data_dir)).tool_names

    def relabel(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "expected_tools": [reference(t, topics) for t in row["expected_tools"]]}

    return relabel


def callnavi_relabel(data_dir: Path) -> Relabel:
    folder = callnavi_dir(data_dir)

    def relabel(row: dict[str, Any]) -> dict[str, Any]:
        names = load_domain(folder, row["domain"]).data_names
        gold = row["ground_truth"]
        relabelled = {
            "API": [reference(api, names) for api in gold["API"]],
            "parameters": [
                {reference(key, names): value for key, value in arguments.items()}
                for arguments in gold["parameters"]
            ],
        }
        return {**row, "ground_truth": relabelled}

    return relabel


def rewrite(path: Path, relabel: Relabel) -> str:
    """The file's text with every row relabelled (blank lines kept).

    Raises:
        DataError: ``path:line`` of a row that is not JSON or names what its catalog lacks.
    """
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            lines.append(line)
            continue
        try:
            lines.append(json.dumps(relabel(json.loads(line)), ensure_ascii=False))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataError(path, number, f"cannot relabel the row: {exc!s}") from exc
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="benchmark data directory")
    parser.add_argument("--check", action="store_true", help="report, change nothing")
    args = parser.parse_args(argv)
    settings = Settings.from_env(os.environ)
    data_dir = args.data or settings.resolve_data_dir()
    trainsets = settings.trainsets_dir
    files = {
        trainsets / "nlt-alex.jsonl": nlt_relabel(data_dir, "alex"),
        trainsets / "nlt-sage.jsonl": nlt_relabel(data_dir, "sage"),
        trainsets / "callnavi.jsonl": callnavi_relabel(data_dir),
    }
    stale = []
    for path, relabel in files.items():
        try:
            text = rewrite(path, relabel)
        except DataError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if text != path.read_text(encoding="utf-8"):
            stale.append(path.name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    verb = "spell names" if args.check else "rewritten"
    print(f"{verb}: {', '.join(stale)}" if stale else "every label refers by position")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
