"""Every artifact shipped in compiled/ still loads against the current code and copies no data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import freyr_dspy
from freyr_dspy.artifacts import ArtifactMeta, read_artifact
from freyr_dspy.benchmark import EvalOptions
from freyr_dspy.benchmarks import get_benchmark
from freyr_dspy.datasets import load_tools_file
from freyr_dspy.domains import PLAIN_DOMAIN_NAME
from freyr_dspy.program import REFERENCE, FreyrProgram, ProgramSpec
from freyr_dspy.prompting import pool_size
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Toolbox, toolbox_fingerprint
from tests.support.paths import COMPILED_DIR, real_data_dir

COMPILED = COMPILED_DIR
ARTIFACTS = sorted(COMPILED.glob("**/*.json"))
#: The tools files of our suites: a program compiled for one of their toolboxes is loaded with
#: it (a user brings their own); one compiled on several toolboxes takes any of them.
SUITE_TOOLS = sorted((COMPILED.parent / "trainsets").glob("*/tools.json"))


def toolbox_for(path: Path) -> Toolbox | None:
    """The tools a program compiled for a user's tools is loaded with (None for the others)."""
    meta, _ = read_artifact(path, root=COMPILED)
    if meta.program.domain != PLAIN_DOMAIN_NAME:
        return None
    boxes = [box for tools in SUITE_TOOLS for box in load_tools_file(tools).values()]
    same = [box for box in boxes if toolbox_fingerprint(box) == meta.toolbox]
    return same[0] if same else boxes[0]


def settings_for(path: Path) -> Settings:
    """Settings that find the benchmark data, or a skip when the artifact needs it and it is absent.

    An artifact that refers to its domain's names by position is filled from the data.
    """
    data = real_data_dir()
    meta, _ = read_artifact(path, root=COMPILED)
    skip_without_data(path, meta)
    return Settings(data_dir=data if data.is_dir() else None)


def skip_without_data(path: Path, meta: ArtifactMeta) -> None:
    """Skip when the artifact refers to its domain's names by position and the data is absent."""
    data = real_data_dir()
    if meta.name_refs and not data.is_dir():
        pytest.skip(
            f"{path.name} takes its tool names from the benchmark data, not found at {data}"
        )


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: p.name)
def test_shipped_artifact_loads_with_its_recorded_models(path: Path) -> None:
    program = freyr_dspy.load(
        path, root=COMPILED, settings=settings_for(path), toolbox=toolbox_for(path)
    )
    assert program.assignment, "a shipped artifact records which model plays each role"
    assert set(program.assignment) <= set(program.role_names)
    meta, _ = read_artifact(path, root=COMPILED)
    shipped = (meta.search or {}).get("shipped_config") or {}
    # a compile study may ship its baseline without demos; one that chose a pool keeps it
    if shipped.get("pool"):
        assert any(pool_size(p) for p in program.predictors()), "the compiled pool was kept"
    elif shipped.get("demos", 1) > 0 and not meta.search:
        assert any(p.demos for _, p in program.named_predictors()), "compiled demos were kept"


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: p.name)
def test_shipped_artifact_spells_none_of_its_data_names(path: Path) -> None:
    program = freyr_dspy.load(
        path, root=COMPILED, settings=settings_for(path), toolbox=toolbox_for(path)
    )
    names = program.data_names()
    # references are left out first: "name" itself may be a data name (a CallNavi parameter)
    stored = REFERENCE.sub("", json.dumps(json.loads(path.read_text(encoding="utf-8"))["program"]))
    spelled = [
        n for n in names if re.search(rf"(?<!\w){re.escape(json.dumps(n)[1:-1])}(?!\w)", stored)
    ]
    assert spelled == [], f"{path.name} copies names from the benchmark data"
    loaded = json.dumps(freyr_dspy.artifacts.program_state(program))
    assert not names or any(n in loaded for n in names), "the names are filled in on load"


@pytest.mark.parametrize("path", ARTIFACTS, ids=lambda p: p.name)
def test_shipped_artifact_keeps_the_programs_retry_budget(path: Path) -> None:
    # Compiled with max_retries=0 to save time, an artifact once ran every test step with one
    # attempt per call beside uncompiled programs with four. The budget to keep is the one the
    # benchmark gives its own uncompiled program (CallNavi executes no call, so it retries none).
    meta, _ = read_artifact(path, root=COMPILED)
    skip_without_data(path, meta)
    options = EvalOptions(data_dir=real_data_dir())
    plain = meta.program.domain == PLAIN_DOMAIN_NAME  # compiled for a user's tools
    uncompiled = FreyrProgram.from_spec(
        ProgramSpec(strategy=meta.program.strategy, options=meta.program.options),
        benchmark=None if plain else get_benchmark(str(meta.benchmark)),
        eval_options=options,
        toolbox=Toolbox([]) if plain else None,
    )
    assert meta.program.max_retries == uncompiled.max_retries, (
        f"{path.name} was compiled with {meta.program.max_retries} retries, "
        f"its uncompiled program has {uncompiled.max_retries}"
    )
