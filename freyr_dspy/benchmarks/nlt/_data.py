"""Load NLT scenario files, alternative tool descriptions and NLT-style trainsets.

A scenario file (``<data>/nlt/<scenario>.json``) holds ``scenario``, ``source``, ``tools``
(``[{name, description}]``), ``prompts`` (the paper's ``nlt`` and ``structured`` system
prompts) and ``inputs`` (``[{id, message, expected_tools}]``). Any file in that format
works, not only the two published scenarios. Every error names the file (and the line for
JSONL) and says what was expected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.program import REFERENCE, fill_names_in_json

__all__ = [
    "Scenario",
    "function_name",
    "load_scenario",
    "load_trainset",
    "scenario_path",
    "with_tool_descriptions",
]

#: Sub-folder of the data directory that holds the scenario files.
NLT_FOLDER = "nlt"


class TopicTool(BaseModel):
    """One topic of a scenario: a parameterless tool named after it."""

    name: str = Field(min_length=1)
    description: str = ""


class NltInput(BaseModel):
    """One benchmark input: a message and the exact set of tools it needs."""

    id: int | str
    message: str = Field(min_length=1)
    expected_tools: list[str] = Field(default_factory=list)


class Scenario(BaseModel):
    """A whole scenario file; expected tools must name the scenario's tools."""

    scenario: str = Field(min_length=1)
    source: str = ""
    tools: list[TopicTool] = Field(min_length=1)
    prompts: dict[str, str] = Field(default_factory=dict)
    inputs: list[NltInput] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_names(self) -> Scenario:
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")
        for item in self.inputs:
            unknown = [t for t in item.expected_tools if t not in names]
            if unknown:
                raise ValueError(
                    f"input {item.id}: unknown expected tools {unknown}; tools are {names}"
                )
        return self

    @property
    def tool_names(self) -> list[str]:
        """Topic names in file order."""
        return [t.name for t in self.tools]

    @property
    def data_names(self) -> list[str]:
        """The names the data defines: the topics, then their functions, in file order.

        Trainset labels and compiled demos refer to them by position (``{{name:N}}``), so the
        topic at position N is also name N.
        """
        return [*self.tool_names, *(function_name(t) for t in self.tool_names)]


class TrainRow(BaseModel):
    """One line of ``trainsets/nlt-<scenario>.jsonl``.

    A tool is named either as the data spells it or by its position among the scenario's
    topics, ``{{name:N}}`` (what the project's own trainsets do, so they copy no names).
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    message: str = Field(min_length=1)
    expected_tools: list[str] = Field(default_factory=list)
    conversation: str = ""


def function_name(topic: str) -> str:
    """The structured-mode function of a topic: ``Past Purchases`` -> ``check_past_purchases``."""
    words = re.findall(r"[a-z0-9]+", topic.lower())
    return "check_" + "_".join(words)


def scenario_path(data_dir: Path, scenario: str) -> Path:
    """Return ``<data_dir>/nlt/<scenario>.json``.

    Raises:
        ConfigError: when the file does not exist; the message names ``--data``.
    """
    path = Path(data_dir) / NLT_FOLDER / f"{scenario}.json"
    if not path.is_file():
        raise ConfigError(
            f"NLT scenario file {str(path)!r} not found; pass --data DIR "
            f"(a folder with {NLT_FOLDER}/{scenario}.json) or set FREYR_DATA_DIR"
        )
    return path


def load_scenario(path: Path) -> Scenario:
    """Read and validate one scenario file.

    Raises:
        DataError: for unreadable JSON (with its line) or a file that breaks the format.
    """
    data = _read_json(path)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise DataError(path, None, _first_error(exc)) from exc


def with_tool_descriptions(scenario: Scenario, path: Path) -> Scenario:
    """Return the scenario with tool descriptions replaced from ``path`` (robustness runs).

    ``path`` holds ``{"tools": [{name, description}]}`` or just that list. Tools it does not
    mention keep their description; the names must be the scenario's, because the expected
    tools of the inputs refer to them.

    Raises:
        DataError: for a malformed file or a tool name the scenario does not have.
    """
    data = _read_json(path)
    items = data.get("tools") if isinstance(data, dict) else data
    try:
        tools = [TopicTool.model_validate(item) for item in items or []]
    except (ValidationError, TypeError) as exc:
        raise DataError(path, None, f"expected a list of {{name, description}}: {exc}") from exc
    replacements = {t.name: t.description for t in tools}
    unknown = sorted(set(replacements) - set(scenario.tool_names))
    if unknown or not replacements:
        raise DataError(
            path,
            None,
            f"tool names {unknown or '(none)'} are not in scenario "
            f"{scenario.scenario!r}; expected some of {scenario.tool_names}",
        )
    new_tools = [
        TopicTool(name=t.name, description=replacements.get(t.name, t.description))
        for t in scenario.tools
    ]
    return scenario.model_copy(update={"tools": new_tools})


def load_trainset(path: Path, tool_names: list[str] | None = None) -> list[TrainRow]:
    """Read a JSONL trainset; every row is validated and errors carry ``path:line``.

    Args:
        path: the JSONL file.
        tool_names: the scenario's topics in file order. When given, ``{{name:N}}`` in a
            row stands for topic N and every expected tool must be one of these names.

    Raises:
        DataError: for a missing file, bad JSON, a row breaking the format, an unknown tool
            name, a reference without ``tool_names`` or past their end, or a duplicate id.
    """
    if not path.is_file():
        raise DataError(path, None, "trainset file not found")
    rows: list[TrainRow] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = _train_row(path, number, _with_names(path, number, line, tool_names))
        unknown = [t for t in row.expected_tools if tool_names is not None and t not in tool_names]
        if unknown:
            raise DataError(path, number, f"unknown tools {unknown}; expected some of {tool_names}")
        if row.id in seen:
            raise DataError(path, number, f"duplicate id {row.id!r}")
        seen.add(row.id)
        rows.append(row)
    return rows


def _with_names(path: Path, number: int, line: str, tool_names: list[str] | None) -> str:
    """The line with its ``{{name:N}}`` references replaced by the topics they stand for."""
    if not REFERENCE.search(line):
        return line
    if tool_names is None:
        raise DataError(path, number, "the row names tools by position; the scenario is needed")
    try:
        return fill_names_in_json(line, tool_names)
    except ValueError as exc:
        raise DataError(path, number, str(exc)) from exc


def _train_row(path: Path, number: int, line: str) -> TrainRow:
    try:
        return TrainRow.model_validate_json(line)
    except ValidationError as exc:
        raise DataError(path, number, _first_error(exc)) from exc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except OSError as exc:
        raise DataError(path, None, f"cannot read: {exc.strerror}") from exc


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])
