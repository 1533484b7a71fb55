"""The program an artifact describes: rebuilt from its spec, checked, with its state and models.

The spec is built by the artifact's benchmark when it is installed (or on the user's toolbox
for a program compiled for their tools); the rebuilt roles' signatures must be the ones it was
compiled with; the names the state refers to by position are filled in from the rebuilt
domain (``program.name_refs``), and the recorded models are applied, or the ones asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from freyr_dspy.artifacts._meta import ArtifactMeta
from freyr_dspy.artifacts._migrate import check_signatures, migrate_state_keys, taken_settings
from freyr_dspy.benchmark import BENCHMARKS, EvalOptions, load_all
from freyr_dspy.domains import PLAIN_DOMAIN_NAME
from freyr_dspy.errors import ArtifactError, ConfigError, UnknownRoleError
from freyr_dspy.program import FreyrProgram, fill_names, fingerprint, map_strings
from freyr_dspy.prompting import check_pool
from freyr_dspy.schemas import RoleModel
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Toolbox, toolbox_changes

__all__ = ["ModelsArg", "benchmark_data_dir", "check_toolbox", "program_from"]

logger = logging.getLogger(__name__)

ModelsArg = str | Mapping[str, str | RoleModel] | None


def program_from(
    meta: ArtifactMeta,
    state: dict[str, Any],
    path: str | Path,
    settings: Settings,
    models: ModelsArg = None,
    toolbox: Toolbox | None = None,
) -> FreyrProgram:
    """The program an artifact's checked metadata and state describe, with its models."""
    program = _rebuild(meta, settings, toolbox)
    check_signatures(meta, program, path)
    _load_state(program, _fill_data_names(meta, state, program, path), path)
    program.apply_assignment(_assignment(meta, program, models), cache=settings.cache)
    return program


def check_toolbox(
    meta: ArtifactMeta, toolbox: Toolbox, path: str | Path, allow_changed: bool
) -> None:
    """Refuse (or warn about) tools that differ from the ones the program was compiled for."""
    if meta.toolbox is None:
        return
    changes = toolbox_changes(meta.toolbox, toolbox)
    if not changes:
        return
    text = f"artifact {path} was compiled for other tools ({'; '.join(changes)})"
    if not allow_changed:
        raise ConfigError(f"{text}; recompile it, or accept them with --allow-changed-tools")
    logger.warning("%s; running it anyway", text)


def _rebuild(meta: ArtifactMeta, settings: Settings, toolbox: Toolbox | None) -> FreyrProgram:
    """The program the artifact's spec describes, built by its benchmark when installed.

    A plain tool-use program (compiled on a user's tools) is built on ``toolbox`` alone.
    """
    spec = meta.program
    benchmark, options = None, None
    if meta.benchmark and spec.domain != PLAIN_DOMAIN_NAME:
        load_all()
        benchmark = BENCHMARKS.get(meta.benchmark)
        options = EvalOptions(
            data_dir=benchmark_data_dir(settings),
            mode=meta.eval_mode or "bootstrap",
            extra=dict(meta.eval_extra),
        )
    spec = taken_settings(spec)
    try:
        program = FreyrProgram.from_spec(
            spec,
            benchmark=benchmark,
            eval_options=options,
            toolbox=toolbox if benchmark is None else None,
        )
    except ConfigError as exc:
        if spec.domain == PLAIN_DOMAIN_NAME and toolbox is None:
            raise  # the caller's to fix (pass the tools), not a broken artifact
        raise ArtifactError(f"artifact cannot be rebuilt: {exc}") from exc
    if toolbox is not None and benchmark is not None:
        program.toolbox = toolbox
    if program.domain.name != spec.domain or program.strategy_name != spec.strategy:
        raise ArtifactError(
            f"artifact is for domain {spec.domain!r} / strategy "
            f"{spec.strategy!r}, but rebuilt {program.domain.name!r} / "
            f"{program.strategy_name!r}"
        )
    return program


def _fill_data_names(
    meta: ArtifactMeta, state: dict[str, Any], program: FreyrProgram, path: str | Path
) -> dict[str, Any]:
    """The state with its name references replaced by the names of the rebuilt domain.

    Raises:
        ArtifactError: when the domain's names are not the ones the artifact was saved with.
    """
    if meta.name_refs is None:
        return state
    names = program.data_names()
    if fingerprint(names) != meta.name_refs:
        raise ArtifactError(
            f"artifact {path} was compiled against another tool catalog of "
            f"{meta.program.domain!r} than the data directory holds; check --data / "
            "FREYR_DATA_DIR, or recompile it"
        )
    try:
        return cast(dict[str, Any], map_strings(state, lambda text: fill_names(text, names)))
    except ValueError as exc:
        raise ArtifactError(f"artifact {path}: {exc}") from exc


def _load_state(program: FreyrProgram, state: dict[str, Any], path: str | Path) -> None:
    expected = {name for name, _ in program.named_predictors()}
    state = migrate_state_keys(state, expected)
    if set(state) != expected:
        raise ArtifactError(
            f"artifact {path} holds predictors {sorted(state)}, the program has {sorted(expected)}"
        )
    if any(isinstance(p, dict) and p.get("lm") for p in state.values()):
        raise ArtifactError(f"artifact {path} carries LM state; freyr never writes that")
    try:
        program.load_state(state)
        for predictor in program.predictors():
            check_pool(predictor)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ArtifactError(f"artifact {path} has a malformed program state: {exc!r}") from exc


def _assignment(
    meta: ArtifactMeta, program: FreyrProgram, models: ModelsArg
) -> dict[str, RoleModel]:
    recorded = {
        r: meta.assignment.get(r) or RoleModel(model=Settings().default_model)
        for r in program.role_names
    }
    if models is None:
        return recorded
    wanted = dict.fromkeys(program.role_names, models) if isinstance(models, str) else models
    for role, choice in wanted.items():
        if role not in recorded:
            raise UnknownRoleError(role, program.role_names)
        if isinstance(choice, RoleModel):
            recorded[role] = choice
        else:
            recorded[role] = recorded[role].model_copy(update={"model": choice})
    return recorded


def benchmark_data_dir(settings: Settings) -> Path:
    """The benchmark data folder, or the missing candidate (benchmarks without data ignore it)."""
    try:
        return settings.resolve_data_dir()
    except ConfigError:  # a benchmark that needs its data reports the missing folder itself
        return settings.data_dir or settings.project_dir / "data-not-found"
