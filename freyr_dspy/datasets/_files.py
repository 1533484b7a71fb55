"""A ``ToolCallBenchmark`` from what the command line names: tools, examples, dev examples.

``--tools FILE`` | ``--mcp CMD_OR_URL`` | ``--tools-module pkg.mod:attr`` give the tools (or
each example brings its own), ``--examples FILE`` the rows, ``--dev FILE`` a dev set apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from freyr_dspy.datasets._benchmark import ToolCallBenchmark, read_rows
from freyr_dspy.datasets._toolboxes import DEFAULT_TOOLBOX, load_tools_file, toolbox_from_module
from freyr_dspy.errors import ConfigError
from freyr_dspy.tools import Toolbox, toolbox_fingerprint

__all__ = ["dataset_benchmark", "dataset_digest", "open_toolboxes"]


def open_toolboxes(
    tools: Path | None = None, mcp: str | None = None, tools_module: str | None = None
) -> dict[str, Toolbox]:
    """The toolboxes one of the three sources gives (none: the rows bring their own tools).

    An MCP toolbox runs its server until ``close()``.

    Raises:
        ConfigError: more than one source given, or a source that cannot be used.
        DataError: a malformed tools file.
    """
    given = [
        name
        for name, v in (("--tools", tools), ("--mcp", mcp), ("--tools-module", tools_module))
        if v
    ]
    if len(given) > 1:
        raise ConfigError(f"give the tools one way: {' or '.join(given)}, not both")
    if tools is not None:
        return load_tools_file(tools)
    if mcp is not None:
        return {DEFAULT_TOOLBOX: Toolbox.from_mcp(mcp)}
    if tools_module is not None:
        return {DEFAULT_TOOLBOX: toolbox_from_module(tools_module)}
    return {}


def dataset_benchmark(
    boxes: Mapping[str, Toolbox],
    examples: Path,
    *,
    dev: Path | None = None,
    execute: bool = False,
    labelled_only: bool = True,
) -> ToolCallBenchmark:
    """The benchmark of ``examples`` (scored and trained on) and ``dev`` over ``boxes``.

    ``labelled_only=False`` accepts rows without calls in ``examples`` (a compile with a
    teacher labels them first); dev rows must always be labelled.

    Raises:
        DataError: ``path:line`` for the first bad row of either file.
    """
    rows = read_rows(examples, boxes, labelled_only=labelled_only)
    dev_rows = read_rows(dev, boxes) if dev is not None else None
    shared = next(iter(boxes.values())) if len(boxes) == 1 else None
    return ToolCallBenchmark(rows=rows, dev_rows=dev_rows, toolbox=shared, execute=execute)


def dataset_digest(boxes: Mapping[str, Toolbox], *files: Path | None) -> str:
    """A short hash of the tools and the example files: what a resumable run depends on."""
    digest = hashlib.sha256()
    fingerprints = {name: toolbox_fingerprint(box) for name, box in boxes.items()}
    digest.update(json.dumps(fingerprints, sort_keys=True).encode("utf-8"))
    for path in files:
        if path is not None:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
