"""The project's own CallNavi-style training questions (``trainsets/callnavi.jsonl``).

Each row is a question we wrote for one of the shared domains, with its gold call list in
the benchmark's format. Rows are validated one by one (``path:line`` on error); when the data
directory is known, every gold API must exist in its domain's catalog, and no question may
repeat a benchmark question (the benchmark is for testing, never for training).

API and parameter names may be written by position in the domain's ``data_names``
(``{{name:N}}``), as the project's own trainset does so that it copies no names from the
data; they are filled in from the data directory when the file is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from freyr_dspy.benchmarks.callnavi._data import (
    PLACEHOLDER,
    Difficulty,
    Question,
    available_domains,
    load_domain,
)
from freyr_dspy.errors import DataError
from freyr_dspy.program import REFERENCE, fill_names_in_json

__all__ = ["benchmark_overlap", "load_trainset"]


class GoldCalls(BaseModel):
    """A gold call list: API names and one argument object per call."""

    model_config = ConfigDict(extra="forbid")

    API: list[str]
    parameters: list[dict[str, Any]]

    @model_validator(mode="after")
    def _aligned(self) -> GoldCalls:
        if not self.API:
            raise ValueError("API must name at least one call")
        if len(self.parameters) != len(self.API):
            raise ValueError(f"{len(self.API)} APIs but {len(self.parameters)} parameter objects")
        return self


class TrainRow(BaseModel):
    """One training question."""

    model_config = ConfigDict(extra="forbid")

    id: str
    domain: str
    question: str
    difficulty: Difficulty
    ground_truth: GoldCalls

    @model_validator(mode="after")
    def _difficulty_fits(self) -> TrainRow:
        calls = len(self.ground_truth.API)
        if self.difficulty == "easy" and calls != 1:
            raise ValueError(f"an easy question has exactly one call, this one has {calls}")
        if self.difficulty != "easy" and calls < 2:
            raise ValueError(f"a {self.difficulty} question has several calls, this one has 1")
        if self.difficulty == "hard" and PLACEHOLDER not in str(self.ground_truth.parameters):
            raise ValueError("a hard question has a dependent call: use the $$$ placeholder")
        return self


def load_trainset(path: Path, data_folder: Path | None = None) -> list[Question]:
    """Read and validate a trainset file.

    Args:
        path: the JSONL file.
        data_folder: the CallNavi data folder; when given, domains and API names are checked
            against its catalogs.

    Raises:
        DataError: ``path:line`` for invalid JSON, a row that fails validation, a duplicate
            id, an unknown domain or an API its domain lacks.
    """
    if not path.is_file():
        raise DataError(path, None, "trainset file not found")
    questions: list[Question] = []
    seen: set[str] = set()
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = _row(path, line_no, _with_names(path, line_no, line, data_folder))
        if row.id in seen:
            raise DataError(path, line_no, f"duplicate id {row.id!r}")
        seen.add(row.id)
        if data_folder is not None:
            _check_catalog(path, line_no, row, data_folder)
        questions.append(
            Question(
                id=row.id,
                domain=row.domain,
                text=row.question,
                difficulty=row.difficulty,
                gold=row.ground_truth.model_dump(),
                line=line_no,
            )
        )
    return questions


def _with_names(path: Path, line_no: int, line: str, folder: Path | None) -> str:
    """The line with its ``{{name:N}}`` references filled from its domain's catalog."""
    if not REFERENCE.search(line):
        return line
    if folder is None:
        raise DataError(path, line_no, "the row names APIs by position; the data is needed")
    try:
        domain = json.loads(line).get("domain")
    except (json.JSONDecodeError, AttributeError):
        return line  # _row reports the malformed line
    if domain not in available_domains(folder):
        raise DataError(path, line_no, f"unknown domain {domain!r}")
    names = load_domain(folder, domain).data_names
    try:
        return fill_names_in_json(line, names)
    except ValueError as exc:
        raise DataError(path, line_no, str(exc)) from exc


def _row(path: Path, line_no: int, line: str) -> TrainRow:
    try:
        return TrainRow.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "row"
        raise DataError(path, line_no, f"{where}: {first['msg']}") from exc


def _check_catalog(path: Path, line_no: int, row: TrainRow, folder: Path) -> None:
    domains = available_domains(folder)
    if row.domain not in domains:
        raise DataError(path, line_no, f"unknown domain {row.domain!r}; found {', '.join(domains)}")
    catalog = load_domain(folder, row.domain)
    for name, arguments in zip(row.ground_truth.API, row.ground_truth.parameters, strict=True):
        spec = catalog.api(name)
        if spec is None:
            raise DataError(path, line_no, f"{row.domain} has no API {name!r}")
        unknown = sorted(set(arguments) - set(spec.parameters))
        if unknown:
            raise DataError(path, line_no, f"{name} has no parameter(s) {', '.join(unknown)}")


def benchmark_overlap(questions: list[Question], data_folder: Path) -> list[str]:
    """Ids of training questions whose text equals a benchmark question (any domain)."""
    texts = {
        _normalised(q.text)
        for domain in available_domains(data_folder)
        for q in load_domain(data_folder, domain).questions
    }
    return [q.id for q in questions if _normalised(q.text) in texts]


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())
