from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest

import freyr_dspy._files
from freyr_dspy.artifacts import (
    ArtifactMeta,
    build_meta,
    load,
    migrate_state_keys,
    program_state,
    read_artifact,
    save,
)
from freyr_dspy.benchmarks._todo import TodoBenchmark
from freyr_dspy.compiling import OptimizerConfig
from freyr_dspy.compiling._compiler import compile_program
from freyr_dspy.compiling._job import report_meta
from freyr_dspy.errors import ArtifactError, UnknownRoleError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles import signature_hash
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.settings import Settings
from freyr_dspy.testing import unregister_fake
from tests.support.compile_fakes import OPTIONS, SkilledLM, project, skilled_program


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FreyrProgram, str]]:
    """A labeled-compiled todo program and its artifact text (compiled once per module)."""
    program, _ = skilled_program()
    settings = project(tmp_path_factory.mktemp("build"))
    report = compile_program(
        program,
        TodoBenchmark(),
        OptimizerConfig(name="labeled"),
        settings=settings,
        options=OPTIONS,
    )
    meta = report_meta(report, benchmark="todo", options=OPTIONS)
    path = save(report.program, settings.compiled_dir / "todo.json", meta)
    yield report.program, path.read_text(encoding="utf-8")
    unregister_fake("skilled")


@pytest.fixture
def compiled(
    built: tuple[FreyrProgram, str], tmp_path: Path
) -> tuple[FreyrProgram, Path, Settings]:
    """The artifact as compiled/todo.json of a fresh project folder."""
    program, text = built
    settings = Settings(project_dir=tmp_path)
    path = settings.compiled_dir / "todo.json"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return program, path, settings


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_round_trip_is_exact_and_runs(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    program, path, settings = compiled
    loaded = load(path, settings=settings)
    assert program_state(loaded) == program_state(program)
    assert any(p.demos for p in loaded.predictors())
    assert loaded.assignment == program.assignment
    result = loaded(message="Add a task called fixture beta with priority 3.").result
    assert [c.tool for c in result.calls] == ["add_task"] and result.calls[0].outcome.ok
    # a bare name is looked up in compiled/
    assert program_state(load("todo.json", settings=settings)) == program_state(program)


def test_metadata_records_the_build(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    program, path, settings = compiled
    meta, state = read_artifact(path, settings=settings)
    assert meta.dspy_version == dspy.__version__
    assert meta.benchmark == "todo" and meta.program.strategy == "freyr"
    assert meta.optimizer is not None and meta.optimizer.name == "labeled"
    assert meta.assignment["intent"].model == "fake/skilled"
    assert meta.signature_hashes["intent"] == signature_hash(type(program.role("intent")).signature)
    assert meta.trainset_sha256 and len(meta.trainset_sha256) == 64
    assert meta.scores.after is not None and meta.scores.before is not None
    assert meta.scores.after > meta.scores.before
    assert set(state) == {name for name, _ in program.named_predictors()}
    assert all(entry["lm"] is None for entry in state.values())


def test_no_api_key_is_ever_written(tmp_path: Path) -> None:
    program = FreyrProgram("todo")
    program.apply_assignment(
        {
            r: RoleModel(model="hosted_vllm/tiny", api_base="http://127.0.0.1:9/v1")
            for r in program.role_names
        }
    )
    assert program.role("intent").predict.lm.kwargs.get("api_key")  # the LM itself has one
    path = save(program, tmp_path / "compiled" / "remote.json")
    assert "api_key" not in path.read_text(encoding="utf-8")
    # the LMs are attached again after saving
    assert program.role("intent").predict.lm is not None


def test_other_models_than_recorded(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    _, path, settings = compiled
    loaded = load(path, settings=settings, models="fake/rules")
    assert {p.lm.model for p in loaded.predictors()} == {"fake/rules"}
    mixed = load(
        path,
        settings=settings,
        models={
            "intent": "fake/rules",
            "summary": RoleModel(model="fake/rules", sampling=Sampling(temperature=0.2)),
        },
    )
    assert mixed.role("intent").predict.lm.model == "fake/rules"
    assert mixed.role("parameters").predict.lm.model == "fake/skilled"
    assert mixed.assignment["summary"].sampling.temperature == 0.2
    with pytest.raises(UnknownRoleError):
        load(path, settings=settings, models={"planner": "fake/rules"})


@pytest.mark.parametrize("cut", [0, 1, 100, -5])
def test_corrupt_or_truncated_is_rejected(
    compiled: tuple[FreyrProgram, Path, Settings], cut: int
) -> None:
    _, path, settings = compiled
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:cut], encoding="utf-8")
    with pytest.raises(ArtifactError, match="corrupt or truncated") as info:
        load(path, settings=settings)
    assert "\n" not in str(info.value)


def test_not_an_artifact(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    _, path, settings = compiled
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(ArtifactError, match="not a freyr artifact"):
        load(path, settings=settings)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dspy_version", "2.6.27", "dspy 2.6.27"),
        ("freyr_version", "9.0.0", "freyr-dspy 9.0.0"),
        ("format_version", 99, "format version 99"),
    ],
)
def test_version_mismatch_is_rejected(
    compiled: tuple[FreyrProgram, Path, Settings], field: str, value: object, message: str
) -> None:
    _, path, settings = compiled
    _edit(path, lambda d: d["meta"].__setitem__(field, value))
    with pytest.raises(ArtifactError, match=message):
        load(path, settings=settings)


def test_signature_mismatch_is_rejected(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    _, path, settings = compiled
    _edit(path, lambda d: d["meta"]["signature_hashes"].__setitem__("parameters", "0" * 16))
    with pytest.raises(ArtifactError, match="role\\(s\\) parameters changed"):
        load(path, settings=settings)


def test_state_that_does_not_fit_is_rejected(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    _, path, settings = compiled
    _edit(path, lambda d: d["program"].pop("strategy.chat.predict"))
    with pytest.raises(ArtifactError, match="holds predictors"):
        load(path, settings=settings)
    _edit(path, lambda d: d["program"].__setitem__("strategy.chat.predict", {"demos": []}))
    with pytest.raises(ArtifactError, match="malformed program state"):
        load(path, settings=settings)


def test_artifacts_keyed_by_role_load_into_the_strategy_module(
    compiled: tuple[FreyrProgram, Path, Settings],
) -> None:
    """Artifacts written before strategies held their roles keyed predictors by role alone."""
    program, path, settings = compiled

    def old_keys(document: dict[str, Any]) -> None:
        document["program"] = {
            key.removeprefix("strategy."): value for key, value in document["program"].items()
        }

    _edit(path, old_keys)
    assert "intent.predict" in json.loads(path.read_text(encoding="utf-8"))["program"]
    loaded = load(path, settings=settings)
    demos = [dict(d) for d in program.role("intent").predict.demos]
    assert demos and [dict(d) for d in loaded.role("intent").predict.demos] == demos


def test_artifacts_with_the_old_options_dict_load(
    compiled: tuple[FreyrProgram, Path, Settings],
) -> None:
    """Before typed settings, a program's whole options dict was recorded for any strategy."""
    _, path, settings = compiled
    legacy = {"inner": "nlt", "respond": False, "data_dir": "/data"}
    _edit(path, lambda d: d["meta"]["program"].__setitem__("options", legacy))
    loaded = load(path, settings=settings)
    assert loaded.strategy_name == "freyr" and loaded.strategy.config() == {}


def test_migrate_state_keys_renames_only_unambiguous_role_keys() -> None:
    expected = {"strategy.library.predict", "strategy.inner.intent.predict"}
    state = {"library.predict": 1, "intent.predict": 2, "summary.predict": 3}
    assert migrate_state_keys(state, expected) == {
        "strategy.library.predict": 1,
        "strategy.inner.intent.predict": 2,
        "summary.predict": 3,  # no such predictor: left for the caller to report
    }


def test_any_path_the_caller_names_loads_and_a_bare_name_is_looked_up_in_compiled(
    compiled: tuple[FreyrProgram, Path, Settings],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, path, settings = compiled
    outside = tmp_path / "elsewhere" / "x.json"
    outside.parent.mkdir()
    outside.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(outside.parent)
    for candidate in (outside, "x.json", settings.compiled_dir / ".." / "elsewhere" / "x.json"):
        assert load(candidate, settings=settings).strategy_name == "freyr"
    assert load(path.name, settings=settings) is not None  # not here: found in compiled/
    with pytest.raises(ArtifactError, match="cannot read artifact"):
        load("missing.json", settings=settings)


def test_writes_are_atomic(
    compiled: tuple[FreyrProgram, Path, Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    program, path, _settings = compiled
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(freyr_dspy._files.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        save(program, path, build_meta(program))
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == ["todo.json"]


def test_a_new_artifact_gets_the_mode_open_would_give_and_a_rewrite_keeps_its_mode(
    compiled: tuple[FreyrProgram, Path, Settings],
) -> None:
    program, path, _ = compiled
    plain = path.with_name("plain.json")
    plain.write_text("{}", encoding="utf-8")
    fresh = save(program, path.with_name("fresh.json"), build_meta(program))
    assert fresh.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    path.chmod(0o640)
    save(program, path, build_meta(program))
    assert path.stat().st_mode & 0o777 == 0o640


def test_meta_is_validated(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    _, path, settings = compiled
    _edit(path, lambda d: d["meta"].pop("signature_hashes"))
    with pytest.raises(ArtifactError, match="invalid metadata"):
        load(path, settings=settings)
    assert "signature_hashes" in ArtifactMeta.model_fields


def test_skilled_fixture_is_shared(compiled: tuple[FreyrProgram, Path, Settings]) -> None:
    program, _, _ = compiled
    engines = {id(p.lm.engine) for p in program.predictors()}
    assert len(engines) == 1 and isinstance(program.role("intent").predict.lm.engine, SkilledLM)
