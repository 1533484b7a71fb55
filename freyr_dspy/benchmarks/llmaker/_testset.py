"""Reading the LLMaker test set (``test_cases.json`` + level files) from the data directory.

The data is read where it lies (``<data>/llmaker/``, or ``<data>`` itself when it holds
``test_cases.json``); nothing is copied into the project. Any test case in the published
layout is accepted, not only T1-T5; steps without a check in ``steps.STEP_CHECKS`` can still
be run, but only T1-T5 are scored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from freyr_dspy.benchmarks.llmaker._levels import read_level
from freyr_dspy.benchmarks.llmaker._models import Level
from freyr_dspy.errors import ConfigError, DataError

__all__ = ["TestStep", "load_test_steps"]

TEST_CASES_FILE = "test_cases.json"


class _CaseEntry(BaseModel):
    source: str = ""
    n_steps: int
    requests: list[str]
    start_levels: list[str]


@dataclass(frozen=True)
class TestStep:
    """One request of a test case with the level it starts from in bootstrap mode."""

    __test__ = False  # not a pytest test class

    case: str
    step: int
    request: str
    start: Level
    start_file: str

    @property
    def id(self) -> str:
        """``T2.4``-style identifier."""
        return f"{self.case}.{self.step}"


def llmaker_dir(data_dir: Path) -> Path:
    """Return the folder holding ``test_cases.json`` under a data directory.

    Raises:
        ConfigError: when neither ``data_dir/llmaker`` nor ``data_dir`` holds the test set.
    """
    for candidate in (data_dir / "llmaker", data_dir):
        if (candidate / TEST_CASES_FILE).is_file():
            return candidate
    raise ConfigError(
        f"no LLMaker test set ({TEST_CASES_FILE}) under {str(data_dir)!r}; "
        "pass --data DIR pointing at the benchmarks folder"
    )


def load_test_steps(data_dir: Path) -> list[TestStep]:
    """Read every step of every test case, in file order.

    Raises:
        ConfigError: when the test set is not there.
        DataError: for a malformed ``test_cases.json`` or level file.
    """
    folder = llmaker_dir(data_dir)
    path = folder / TEST_CASES_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    if not isinstance(raw, dict):
        raise DataError(path, 1, "expected an object of test cases")
    steps: list[TestStep] = []
    levels: dict[str, Level] = {}
    for case, entry in raw.items():
        parsed = _parse_case(path, case, entry)
        for k, (request, level_file) in enumerate(
            zip(parsed.requests, parsed.start_levels, strict=True), start=1
        ):
            if level_file not in levels:
                levels[level_file] = read_level(folder / level_file)
            steps.append(TestStep(case, k, request, levels[level_file], level_file))
    return steps


def _parse_case(path: Path, case: str, entry: object) -> _CaseEntry:
    try:
        parsed = _CaseEntry.model_validate(entry)
    except ValidationError as exc:
        raise DataError(path, None, f"test case {case}: {exc.errors()[0]['msg']}") from exc
    if not (parsed.n_steps == len(parsed.requests) == len(parsed.start_levels)):
        raise DataError(
            path, None, f"test case {case}: n_steps, requests and start_levels disagree in length"
        )
    return parsed
