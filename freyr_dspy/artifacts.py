"""Compiled program artifacts: state-only JSON plus metadata, written atomically.

One file holds both, so they can never drift apart::

    {"format": "freyr-artifact", "meta": {...ArtifactMeta...}, "program": {...dump_state...}}

``program`` is DSPy's ``dump_state()`` with every LM detached (never pickle, never an API
key); ``meta`` says how to rebuild the program (domain, strategy, options, role -> model and
sampling) and what it was built from (versions, optimizer, trainset hash, signature hashes,
dev scores). ``load`` refuses anything it cannot trust to behave as compiled: a corrupt or
truncated file, another format or DSPy/freyr version, a role whose signature changed, a
path outside the allowed folder. Names the program's domain reads from benchmark data (tool,
API and parameter names) are stored by position and filled in on load (``name_refs``), so an
artifact copies none of the data and is refused against another catalog.
"""

from __future__ import annotations

import json
import logging
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import dspy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freyr_dspy._files import write_text_atomic
from freyr_dspy.domains.plain import PLAIN_DOMAIN_NAME
from freyr_dspy.errors import ArtifactError, ConfigError, UnknownRoleError, one_line
from freyr_dspy.program import FreyrProgram
from freyr_dspy.program.name_refs import fill_names, fingerprint, map_strings, refer_names
from freyr_dspy.program.spec import ProgramSpec, build_program, spec_of
from freyr_dspy.prompting.demo_pool import POOL_ATTRIBUTE, check_pool, pool_state
from freyr_dspy.roles.signature_dump import signature_hash
from freyr_dspy.schemas import OptimizerConfig, RoleModel
from freyr_dspy.settings import Settings
from freyr_dspy.strategies import accepted_config, get_strategy
from freyr_dspy.tools import Toolbox
from freyr_dspy.tools.fingerprint import toolbox_changes, toolbox_fingerprint

if TYPE_CHECKING:
    from freyr_dspy.benchmark import EvalOptions

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ArtifactMeta",
    "ArtifactScores",
    "ModelsArg",
    "ProgramSpec",
    "StartingPoint",
    "benchmark_data_dir",
    "build_meta",
    "load",
    "migrate_state_keys",
    "program_state",
    "read_artifact",
    "resolve_path",
    "role_signature_hashes",
    "save",
    "starting_point",
]

logger = logging.getLogger(__name__)

FORMAT = "freyr-artifact"
FORMAT_VERSION = 1

ModelsArg = str | Mapping[str, str | RoleModel] | None


class ArtifactScores(BaseModel):
    """Dev scores (success in [0, 1]) and cost before and after compiling."""

    model_config = ConfigDict(extra="forbid")

    before: float | None = None
    after: float | None = None
    dev_size: int = 0
    tokens_per_request_before: float | None = None
    tokens_per_request_after: float | None = None


class ArtifactMeta(BaseModel):
    """Everything recorded next to a compiled program's state."""

    model_config = ConfigDict(extra="forbid")

    format_version: int = FORMAT_VERSION
    freyr_version: str
    dspy_version: str
    python_version: str = Field(default_factory=platform.python_version)
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    benchmark: str | None = None
    eval_mode: str | None = None
    eval_extra: dict[str, Any] = Field(default_factory=dict)
    program: ProgramSpec
    assignment: dict[str, RoleModel] = Field(default_factory=dict)
    optimizer: OptimizerConfig | None = None
    trainset_sha256: str | None = None
    n_train: int = 0
    signature_hashes: dict[str, str]
    scores: ArtifactScores = Field(default_factory=ArtifactScores)
    cache: bool = False
    #: The artifact this one was compiled on top of (``freyr compile --start``), if any.
    started_from: str | None = None
    #: Fingerprint of the domain's data names the state refers to by position, if any.
    name_refs: str | None = None
    #: Tool -> hash of the user's tools a plain tool-use program was compiled for
    #: (``tools.fingerprint``); None when it takes any toolbox (rows brought their own).
    toolbox: dict[str, str] | None = None


def build_meta(program: FreyrProgram, **fields: Any) -> ArtifactMeta:
    """Describe ``program`` (structure, models, signature hashes, versions) plus ``fields``.

    A plain tool-use program records its toolbox's fingerprint, not the tools' text; pass
    ``toolbox=None`` for one compiled to work with any toolbox.
    """
    plain = program.domain.name == PLAIN_DOMAIN_NAME and len(program.toolbox) > 0
    fields.setdefault("toolbox", toolbox_fingerprint(program.toolbox) if plain else None)
    return ArtifactMeta(
        freyr_version=_freyr_version(),
        dspy_version=dspy.__version__,
        program=spec_of(program),
        assignment=dict(program.assignment),
        signature_hashes=role_signature_hashes(program),
        **fields,
    )


def role_signature_hashes(program: FreyrProgram) -> dict[str, str]:
    """Role id -> hash of the role's signature as the code defines it."""
    return {role: signature_hash(type(program.role(role)).signature) for role in program.role_names}


def program_state(program: FreyrProgram) -> dict[str, Any]:
    """The program's DSPy state with every LM detached (what an artifact stores)."""
    lms = {name: p.lm for name, p in program.named_predictors()}
    program.set_lm(None)
    try:
        state: dict[str, Any] = program.dump_state(json_mode=True)
    finally:
        for name, predictor in program.named_predictors():
            predictor.lm = lms[name]
    # DSPy's state leaves extra attributes out; its load_state sets them back.
    for name, predictor in program.named_predictors():
        pool = pool_state(predictor)
        if pool:
            state[name][POOL_ATTRIBUTE] = pool
    return state


def save(program: FreyrProgram, path: str | Path, meta: ArtifactMeta | None = None) -> Path:
    """Write the artifact atomically (temporary file + rename); return its path.

    Raises:
        ArtifactError: when the state cannot be written as JSON or would contain a secret.
    """
    meta = meta or build_meta(program)
    state = program_state(program)
    # NOTE: before the names become references, which could hide a key named api_key
    if _contains_key({"meta": meta.model_dump(mode="json"), "program": state}, "api_key"):
        raise ArtifactError("refusing to write an artifact that contains an api_key")
    meta, state = _refer_data_names(program, meta, state)
    document = {"format": FORMAT, "meta": meta.model_dump(mode="json"), "program": state}
    try:
        text = json.dumps(document, indent=1, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ArtifactError(f"program state is not JSON-serialisable: {exc}") from exc
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, text + "\n")
    return target


def read_artifact(
    path: str | Path, *, settings: Settings | None = None, root: Path | None = None
) -> tuple[ArtifactMeta, dict[str, Any]]:
    """Read and check an artifact; return its metadata and program state.

    Raises:
        ArtifactError: outside the allowed folder, missing, corrupt, truncated, or built by
            another format or DSPy/freyr version.
    """
    resolved = resolve_path(path, root or (settings or Settings()).compiled_dir)
    try:
        document = json.loads(resolved.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ArtifactError(f"cannot read artifact {resolved}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(
            f"corrupt or truncated artifact {resolved}: {exc}; recompile it with `freyr compile`"
        ) from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ArtifactError(f'{resolved} is not a freyr artifact (no "format": "{FORMAT}")')
    try:
        meta = ArtifactMeta.model_validate(_with_legacy_defaults(document.get("meta")))
    except ValidationError as exc:
        raise ArtifactError(f"artifact {resolved} has invalid metadata: {one_line(exc)}") from exc
    _check_versions(meta, resolved)
    state = document.get("program")
    if not isinstance(state, dict):
        raise ArtifactError(f"artifact {resolved} has no program state")
    return meta, state


def load(
    path: str | Path,
    *,
    models: ModelsArg = None,
    settings: Settings | None = None,
    root: Path | None = None,
    toolbox: Toolbox | None = None,
    allow_changed_tools: bool = False,
) -> FreyrProgram:
    """Rebuild a compiled program, ready to call.

    Args:
        path: the artifact, inside ``settings.compiled_dir`` (or ``root``); a bare name is
            looked up there.
        models: other models than recorded: one id for every role, or role -> id or
            ``RoleModel``. Roles not named keep their recorded model and sampling.
        settings: where ``compiled/`` is and whether the DSPy cache is on.
        root: the allowed folder, instead of ``settings.compiled_dir``.
        toolbox: the tools of a program compiled for your own tools (required for those;
            a benchmark's program may take it to use other tools than its domain's).
        allow_changed_tools: accept, with a warning, a toolbox whose tools differ from the
            ones the program was compiled for.

    Raises:
        ArtifactError: see ``read_artifact``; also a role signature that changed since
            compiling, or a state that does not fit the program.
        ConfigError: a program for your own tools loaded without a toolbox, or with tools
            that differ from the compiled ones (naming them).
        UnknownRoleError: ``models`` names a role the program does not have.
    """
    settings = settings or Settings()
    meta, state = read_artifact(path, settings=settings, root=root)
    if toolbox is not None:
        _check_toolbox(meta, toolbox, path, allow_changed_tools)
    return _program_from(meta, state, path, settings, models, toolbox)


def _check_toolbox(
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


def _program_from(
    meta: ArtifactMeta,
    state: dict[str, Any],
    path: str | Path,
    settings: Settings,
    models: ModelsArg = None,
    toolbox: Toolbox | None = None,
) -> FreyrProgram:
    """The program an artifact's checked metadata and state describe, with its models."""
    program = _rebuild(meta, settings, toolbox)
    _check_signatures(meta, program, path)
    _load_state(program, _fill_data_names(meta, state, program, path), path)
    program.apply_assignment(_assignment(meta, program, models), cache=settings.cache)
    return program


@dataclass(frozen=True)
class StartingPoint:
    """A compiled program to compile further, and the benchmark options it was scored with."""

    program: FreyrProgram
    options: EvalOptions
    #: The artifact's resolved path (a compile must not write over it).
    path: Path
    #: What the new artifact records as ``started_from``: the path in ``compiled/`` and optimizer.
    label: str


def starting_point(
    path: str | Path,
    *,
    benchmark: str,
    strategy: str | None = None,
    mode: str | None = None,
    extra: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    toolbox: Toolbox | None = None,
) -> StartingPoint:
    """Load an artifact to compile on top of (``freyr compile --start``).

    The artifact fixes the program and the benchmark options it was compiled with; a
    ``strategy``, ``mode`` or ``extra`` that says otherwise is refused rather than ignored.
    ``toolbox``: the tools of a program compiled for a user's tools (see ``load``).

    Raises:
        ConfigError: the artifact is for another benchmark, or the arguments contradict it.
        ArtifactError: see ``load``.
    """
    from freyr_dspy.benchmark import EvalOptions

    settings = settings or Settings()
    resolved = resolve_path(path, settings.compiled_dir)
    meta, state = read_artifact(resolved, settings=settings)
    if meta.benchmark != benchmark:
        raise ConfigError(f"--start {path} was compiled for {meta.benchmark!r}, not {benchmark!r}")
    recorded_mode = meta.eval_mode or "bootstrap"
    if strategy not in (None, meta.program.strategy) or mode not in (None, recorded_mode) or extra:
        raise ConfigError(
            f"--start {path} fixes the strategy ({meta.program.strategy}), mode "
            f"({recorded_mode}) and options; leave --strategy, --mode and --option out"
        )
    options = EvalOptions(
        data_dir=benchmark_data_dir(settings), mode=recorded_mode, extra=dict(meta.eval_extra)
    )
    where = resolved.relative_to(settings.compiled_dir.resolve())
    optimizer = meta.optimizer.name if meta.optimizer else "uncompiled"
    if toolbox is not None:
        _check_toolbox(meta, toolbox, path, allow_changed=False)
    return StartingPoint(
        program=_program_from(meta, state, resolved, settings, toolbox=toolbox),
        options=options,
        path=resolved,
        label=f"{where} ({optimizer})",
    )


def resolve_path(path: str | Path, root: Path) -> Path:
    """Resolve ``path`` (relative to the working directory, else to ``root``) inside ``root``.

    Raises:
        ArtifactError: when the resolved path lies outside ``root``.
    """
    candidate = Path(path)
    if not candidate.is_absolute() and not candidate.exists():
        candidate = root / candidate
    resolved, allowed = candidate.resolve(), root.resolve()
    if not resolved.is_relative_to(allowed):
        raise ArtifactError(
            f"artifact path {str(path)!r} is outside the allowed folder "
            f"{allowed}; put it there or set FREYR_PROJECT_DIR"
        )
    return resolved


def _rebuild(meta: ArtifactMeta, settings: Settings, toolbox: Toolbox | None) -> FreyrProgram:
    """The program the artifact's spec describes, built by its benchmark when installed.

    A plain tool-use program (compiled on a user's tools) is built on ``toolbox`` alone.
    """
    from freyr_dspy.benchmark import BENCHMARKS, EvalOptions, load_all

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
    # NOTE: artifacts written before strategies took typed settings recorded the program's
    # whole options dict (a benchmark's data_dir, inner and respond, given to every strategy);
    # a strategy is rebuilt from the entries it takes, as it read only those then.
    settings_taken = accepted_config(get_strategy(spec.strategy), spec.options or {})
    spec = spec.model_copy(update={"options": settings_taken})
    try:
        program = build_program(
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


#: What a spec field meant when an older artifact left it out.
_LEGACY_PROGRAM_DEFAULTS = {
    "adapter": "json",
    "ground_arguments": False,  # written before grounding existed: runs as compiled
    "catalog_level": "brief",
    "state_view": None,
    "options": {},
}


def _with_legacy_defaults(meta: Any) -> Any:
    """``meta`` with the spec fields older artifacts did not write set to what they meant.

    A field missing from a spec means "keep the benchmark's choice" now; in an artifact it
    meant the value the program had then.
    """
    if not isinstance(meta, dict) or not isinstance(meta.get("program"), dict):
        return meta
    return {**meta, "program": {**_LEGACY_PROGRAM_DEFAULTS, **meta["program"]}}


def _check_versions(meta: ArtifactMeta, path: Path) -> None:
    if meta.format_version != FORMAT_VERSION:
        raise ArtifactError(
            f"artifact {path} has format version {meta.format_version}; this "
            f"freyr reads version {FORMAT_VERSION}: recompile it"
        )
    for name, built, running in (
        ("dspy", meta.dspy_version, dspy.__version__),
        ("freyr-dspy", meta.freyr_version, _freyr_version()),
    ):
        if _minor(built) != _minor(running):
            raise ArtifactError(
                f"artifact {path} was built with {name} {built}, this is "
                f"{running}: recompile it with `freyr compile`"
            )


#: Role -> hashes of earlier wordings of its signature with the same fields. An artifact
#: carries its own instructions and field descriptions, so one compiled under an earlier
#: wording loads and runs as it was compiled.
REWORDED_SIGNATURES: dict[str, frozenset[str]] = {
    # Instructions on no-fit requests and repeated calls reworded (no field changed).
    "intent": frozenset({"94979756f690364e"}),
    "confirm": frozenset({"2a55270f75c03f84"}),
}


def _check_signatures(meta: ArtifactMeta, program: FreyrProgram, path: str | Path) -> None:
    current = role_signature_hashes(program)
    changed = sorted(
        r
        for r in current.keys() | meta.signature_hashes.keys()
        if current.get(r) != meta.signature_hashes.get(r)
        and meta.signature_hashes.get(r) not in REWORDED_SIGNATURES.get(r, frozenset())
    )
    if changed:
        raise ArtifactError(
            f"artifact {path}: the signature of role(s) {', '.join(changed)} "
            "changed since it was compiled; recompile it with `freyr compile`"
        )


def _refer_data_names(
    program: FreyrProgram, meta: ArtifactMeta, state: dict[str, Any]
) -> tuple[ArtifactMeta, dict[str, Any]]:
    """The state with the domain's data names held by position, and the meta that says so.

    Demos of a benchmark's domain spell its tool names; an artifact refers to them instead,
    so it can be committed without copying the benchmark's data.

    Raises:
        ArtifactError: when the state already reads as holding references.
    """
    names = program.data_names()
    if not names:
        return meta.model_copy(update={"name_refs": None}), state
    try:
        referred = map_strings(state, lambda text: refer_names(text, names))
    except ValueError as exc:
        raise ArtifactError(f"cannot save the program: {exc}") from exc
    return meta.model_copy(update={"name_refs": fingerprint(names)}), referred


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


def migrate_state_keys(state: dict[str, Any], expected: set[str]) -> dict[str, Any]:
    """Rename predictor keys of artifacts written before strategies held their roles.

    Those keyed a predictor by role (``intent.predict``); the role now lives in the strategy
    module (``strategy.intent.predict``, or ``strategy.inner.intent.predict`` under a gate).
    A key is renamed only to the one expected key that ends with it; anything else is left
    for the caller's check to report.
    """
    migrated = {}
    for key, value in state.items():
        matches = [name for name in expected if name.endswith(f".{key}")]
        migrated[matches[0] if key not in expected and len(matches) == 1 else key] = value
    return migrated


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


def _contains_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return any(k == key or _contains_key(v, key) for k, v in value.items())
    if isinstance(value, list):
        return any(_contains_key(v, key) for v in value)
    return False


def benchmark_data_dir(settings: Settings) -> Path:
    """The benchmark data folder, or the missing candidate (benchmarks without data ignore it)."""
    try:
        return settings.resolve_data_dir()
    except ConfigError:  # a benchmark that needs its data reports the missing folder itself
        return settings.data_dir or settings.project_dir / "data-not-found"


def _minor(text: str) -> str:
    return ".".join(text.split(".")[:2])


def _freyr_version() -> str:
    try:
        return version("freyr-dspy")
    except PackageNotFoundError:  # a source tree that was not installed
        return "0.0.0"
