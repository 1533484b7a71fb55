"""Every artifact shipped in compiled/ still loads against the current code."""

from __future__ import annotations

from pathlib import Path

import pytest

import freyr_dspy

COMPILED = Path(__file__).resolve().parent.parent / "compiled"
ARTIFACTS = sorted(COMPILED.glob("**/*.json"))


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: p.name)
def test_shipped_artifact_loads_with_its_recorded_models(path: Path) -> None:
    program = freyr_dspy.load(path, root=COMPILED)
    assert program.assignment, "a shipped artifact records which model plays each role"
    assert set(program.assignment) <= set(program.role_names)
    assert any(p.demos for _, p in program.named_predictors()), "compiled demos were kept"
