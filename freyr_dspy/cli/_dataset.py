"""``--tools/--mcp/--tools-module`` and ``--examples/--dev``: a user's own benchmark.

``freyr eval``, ``compile`` and ``search`` take either ``--benchmark NAME`` or these; the
dataset becomes the ``calls`` benchmark for the rest of the command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from freyr_dspy.cli._common import option_group
from freyr_dspy.errors import ConfigError

if TYPE_CHECKING:
    from freyr_dspy.datasets import ConversationBenchmark, ToolCallBenchmark
    from freyr_dspy.tools import Toolbox

__all__ = ["Dataset", "dataset_options", "open_dataset", "open_tools", "tools_options"]

_FILE = click.Path(path_type=Path, exists=True, dir_okay=False)


#: ``--tools``, ``--mcp`` and ``--tools-module``: the three ways to give tools.
tools_options = option_group(
    click.option(
        "--tools",
        "tools_file",
        type=_FILE,
        help="JSON file of OpenAI tool dicts (a list, or {toolbox: [tools]}).",
    ),
    click.option("--mcp", help="MCP server: a command to start, or an http(s) URL."),
    click.option(
        "--tools-module",
        metavar="MODULE:ATTR",
        help="Python tools: a Toolbox, or a list of functions, in MODULE.",
    ),
)

#: The tools options plus ``--examples``, ``--dev`` and ``--execute``: a user's own benchmark.
dataset_options = option_group(
    tools_options,
    click.option(
        "--examples",
        type=_FILE,
        help="JSONL tool-call examples (instead of --benchmark): docs/tools.md.",
    ),
    click.option("--dev", type=_FILE, help="JSONL dev examples, apart from --examples."),
    click.option(
        "--execute",
        is_flag=True,
        help="Run tools that have functions (default: record the calls only).",
    ),
)


@dataclass(frozen=True)
class Dataset:
    """The benchmark of the user's files, and a hash of them (for resuming and caching)."""

    benchmark: ToolCallBenchmark | ConversationBenchmark
    digest: str
    examples: Path
    #: The tools of the options, by toolbox name (more rows, such as held-out ones, use them).
    boxes: Mapping[str, Toolbox] = field(default_factory=dict)


@contextlib.contextmanager
def open_tools(
    tools_file: Path | None, mcp: str | None, tools_module: str | None
) -> Iterator[dict[str, Toolbox]]:
    """The toolboxes of the tools options (an MCP server runs until the block ends)."""
    from freyr_dspy.datasets import open_toolboxes

    boxes = open_toolboxes(tools_file, mcp, tools_module)
    try:
        yield boxes
    finally:
        for box in boxes.values():
            box.close()


@contextlib.contextmanager
def open_dataset(
    values: dict[str, Any], benchmark: str | None, *, allow_unlabelled: bool = False
) -> Iterator[Dataset | None]:
    """The user's dataset when ``--examples`` is given, registered as the ``calls`` benchmark.

    Consumes the dataset options from ``values``. ``allow_unlabelled`` accepts example rows
    without calls (for a compile that labels them with its teacher).

    Raises:
        ConfigError: both or neither of ``--benchmark`` and ``--examples``, or tools
            options without examples.
    """
    from freyr_dspy.benchmark import register_benchmark
    from freyr_dspy.datasets import dataset_benchmark, dataset_digest, is_conversation_file

    examples: Path | None = values.pop("examples")
    dev: Path | None = values.pop("dev")
    execute: bool = values.pop("execute")
    sources = (values.pop("tools_file"), values.pop("mcp"), values.pop("tools_module"))
    _check_choice(benchmark, examples, dev, any(sources))
    if examples is None:
        yield None
        return
    if is_conversation_file(examples):
        yield _conversations(examples, dev, sources[2])
        return
    with open_tools(*sources) as boxes:
        bench = dataset_benchmark(
            boxes, examples, dev=dev, execute=execute, labelled_only=not allow_unlabelled
        )
        register_benchmark(bench)
        yield Dataset(bench, dataset_digest(boxes, examples, dev), examples, boxes)


def _conversations(examples: Path, dev: Path | None, tools_module: str | None) -> Dataset:
    """A conversation file with the apps of ``--tools-module`` (registered as its benchmark)."""
    from freyr_dspy.benchmark import register_benchmark
    from freyr_dspy.datasets import (
        ConversationBenchmark,
        apps_from_module,
        dataset_digest,
        read_conversations,
    )

    if tools_module is None:
        raise ConfigError(
            f"{examples} holds conversations: give their apps with --tools-module "
            "MODULE:APPS (a mapping of app names to classes)"
        )
    if dev is not None:
        raise ConfigError("--dev goes with one-request examples; conversations take --test")
    apps = apps_from_module(tools_module)
    bench = ConversationBenchmark(apps=apps, rows=read_conversations(examples, apps))
    register_benchmark(bench)
    boxes = {"apps": bench.program_toolbox}
    digest = dataset_digest(boxes, examples, _module_file(tools_module))
    return Dataset(bench, digest, examples, boxes)


def _module_file(spec: str) -> Path | None:
    """The file of a ``MODULE.py:ATTR`` spec (its code decides the apps), if it names one."""
    module = spec.rpartition(":")[0]
    return Path(module) if module.endswith(".py") else None


def _check_choice(
    benchmark: str | None, examples: Path | None, dev: Path | None, tools: bool
) -> None:
    if benchmark and examples:
        raise ConfigError("give --benchmark NAME or --examples FILE, not both")
    if examples is None and (dev or tools):
        raise ConfigError("--tools, --mcp, --tools-module and --dev go with --examples FILE")
    if not benchmark and not examples:
        raise ConfigError("say what to run on: --benchmark NAME, or --examples FILE with --tools")
