"""The tool-call dataset format: one example a line, read and checked row by row.

A JSONL file holds one example per line::

    {"message": "Weather in Oslo?", "calls": [{"name": "get-weather",
     "arguments": {"city": "Oslo", "unit": {"any_of": ["celsius", "c"]}}}]}

- ``calls``: the calls a correct program makes. ``[]`` means no tool may be called; several
  calls are one parallel answer, compared as a set unless ``"ordered": true``. A row with
  no ``calls`` key is *unlabelled* (a teacher model can label it: ``freyr label``).
- An argument value ``{"any_of": [...]}`` lists acceptable values; ``null`` among them means
  the argument may be left out. Arguments a row does not list must be left out (or given
  their schema default).
- ``conversation`` (earlier turns, ``[{"role": ..., "content": ...}]`` or text), ``state``
  (free JSON the tools see), ``tools`` (OpenAI tool dicts offered to this row instead of the
  file-level toolbox), ``toolbox`` (the name of one toolbox of a multi-toolbox file),
  ``category`` (groups the report; default from the number of calls), ``reply`` and ``id``
  are optional.
- ``results`` (optional) makes a *reply row*: what the tools return for the row's calls,
  ``[{"name": ..., "arguments": {...}, "content": "..."}]`` (``"ok": false`` for a tool that
  fails with ``content`` as its error). A call gets the content of the first result of its tool
  whose listed arguments it matches (none listed: any call of the tool); the program then
  writes its reply, and the row is right only when the calls are and the reply states no
  number that neither the request nor a returned result gives.

Every problem is a one-line ``DataError`` with ``path:line``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from freyr_dspy.errors import DataError

__all__ = [
    "AnyOf",
    "CallExample",
    "ExpectedCall",
    "ToolResult",
    "load_examples",
    "load_numbered_examples",
    "parse_examples",
]


class AnyOf(BaseModel):
    """Acceptable values of one argument; ``None`` among them means it may be left out."""

    model_config = ConfigDict(extra="forbid")

    any_of: list[Any] = Field(min_length=1)

    @property
    def optional(self) -> bool:
        """Whether leaving the argument out is acceptable."""
        return any(value is None for value in self.any_of)

    @property
    def values(self) -> list[Any]:
        """The acceptable values (without the "may be left out" marker)."""
        return [value for value in self.any_of if value is not None]


class ExpectedCall(BaseModel):
    """One call a correct program makes."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _read_alternatives(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        return {name: _alternatives(name, value) for name, value in arguments.items()}

    def plain_arguments(self) -> dict[str, Any]:
        """One correct set of arguments: the first listed alternative, optional ones left out."""
        plain = {}
        for name, value in self.arguments.items():
            if not isinstance(value, AnyOf):
                plain[name] = value
            elif value.values and not value.optional:
                plain[name] = value.values[0]
        return plain

    def as_json(self) -> dict[str, Any]:
        """The call as written in a dataset file."""
        return self.model_dump(mode="json")


def _alternatives(name: str, value: Any) -> Any:
    """``{"any_of": [...]}`` becomes ``AnyOf``; any other dict is a plain object value."""
    if isinstance(value, Mapping) and set(value) == {"any_of"}:
        try:
            return AnyOf.model_validate(value)
        except ValidationError as exc:
            raise ValueError(f"argument {name!r}: any_of needs a non-empty list") from exc
    return value


class ToolResult(BaseModel):
    """What a tool returns for a call of a reply row (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    #: The values of the call this answers, compared like expected ones; empty: any call.
    arguments: dict[str, Any] = Field(default_factory=dict)
    content: str = Field(min_length=1)
    #: False: the tool fails, with ``content`` as its error.
    ok: bool = True

    @field_validator("arguments")
    @classmethod
    def _read_alternatives(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        return {name: _alternatives(name, value) for name, value in arguments.items()}


class Turn(BaseModel):
    """One earlier turn of the conversation."""

    model_config = ConfigDict(extra="forbid")

    role: str
    content: str


class CallExample(BaseModel):
    """One example: the request, what it is asked against, and the calls that answer it."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    message: str = Field(min_length=1)
    conversation: list[Turn] | str = Field(default_factory=list)
    state: Any = None
    tools: list[dict[str, Any]] | None = None
    toolbox: str | None = None
    category: str | None = None
    calls: list[ExpectedCall] | None = None
    ordered: bool = False
    reply: str | None = None
    results: list[ToolResult] | None = None

    @property
    def labelled(self) -> bool:
        """Whether the row says which calls are right (a row without ``calls`` does not)."""
        return self.calls is not None

    @property
    def kind(self) -> str:
        """The row's category, or one derived from its calls."""
        return self.category or default_category(self.calls)

    def conversation_turns(self) -> list[dict[str, str]] | str:
        """The conversation as ``FreyrProgram`` takes it."""
        if isinstance(self.conversation, str):
            return self.conversation
        return [turn.model_dump() for turn in self.conversation]

    def as_json(self) -> dict[str, Any]:
        """The row as written in a dataset file (unset fields left out)."""
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def default_category(calls: list[ExpectedCall] | None) -> str:
    """``no-tool``, ``one-call`` or ``multi-call`` (``unlabelled`` without calls)."""
    if calls is None:
        return "unlabelled"
    return {0: "no-tool", 1: "one-call"}.get(len(calls), "multi-call")


def load_examples(path: str | Path) -> list[CallExample]:
    """Read a JSONL file of examples; rows without an ``id`` get ``<file stem>-<line>``.

    Raises:
        DataError: ``path:line`` and the first problem of the first bad row, or an
            unreadable or empty file.
    """
    return [example for _, example in load_numbered_examples(path)]


def load_numbered_examples(path: str | Path) -> list[tuple[int, CallExample]]:
    """``load_examples`` with each example's line number (for messages about its content).

    Raises:
        DataError: see ``load_examples``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(path, None, f"cannot read examples: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise DataError(path, None, f"not UTF-8 text: {exc.reason}") from exc
    rows = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not rows:
        raise DataError(path, None, "no examples (one JSON object per line expected)")
    numbered = [(number, _parse_line(path, number, line)) for number, line in rows]
    _check_unique_ids(path, [e for _, e in numbered], [number for number, _ in numbered])
    return numbered


def parse_examples(
    rows: Iterable[Mapping[str, Any] | CallExample], source: str
) -> list[CallExample]:
    """Check in-memory rows (dicts or ``CallExample``); ``source`` names them in errors.

    Raises:
        DataError: ``source:N`` (the row's 1-based position) for the first bad row.
    """
    examples = []
    for number, row in enumerate(rows, 1):
        example = row if isinstance(row, CallExample) else _validated(source, number, row)
        examples.append(_with_id(example, source, number))
    _check_unique_ids(source, examples, list(range(1, len(examples) + 1)))
    return examples


def _parse_line(path: Path, number: int, line: str) -> CallExample:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})") from exc
    return _with_id(_validated(path, number, data), path, number)


def _with_id(example: CallExample, source: object, number: int) -> CallExample:
    """The example, named ``<source stem>-<number>`` when its row gives no ``id``."""
    if example.id is not None:
        return example
    return example.model_copy(update={"id": f"{Path(str(source)).stem}-{number}"})


def _validated(source: object, number: int, data: Any) -> CallExample:
    if not isinstance(data, Mapping):
        raise DataError(source, number, f"expected a JSON object, got {type(data).__name__}")
    try:
        return CallExample.model_validate(data)
    except ValidationError as exc:
        raise DataError(source, number, first_problem(exc)) from exc


def first_problem(exc: ValidationError) -> str:
    """The first error of a pydantic validation, as one line: ``calls.0.name: Field required``."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "row"
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field (expected message, calls, conversation, state, tools, ...)"
    return f"{where}: {message}"


def _check_unique_ids(source: object, examples: list[CallExample], numbers: list[int]) -> None:
    seen: dict[str, int] = {}
    for example, number in zip(examples, numbers, strict=True):
        assert example.id is not None
        if example.id in seen:
            raise DataError(
                source, number, f"duplicate id {example.id!r} (first on line {seen[example.id]})"
            )
        seen[example.id] = number
