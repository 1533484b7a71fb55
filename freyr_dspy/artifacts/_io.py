"""Compiled program artifacts on disk: state-only JSON plus metadata, written atomically.

One file holds both, so they can never drift apart::

    {"format": "freyr-artifact", "meta": {...ArtifactMeta...}, "program": {...dump_state...}}

``program`` is DSPy's ``dump_state()`` with every LM detached (never pickle, never an API
key); ``meta`` is ``artifacts.meta.ArtifactMeta``. ``load`` refuses anything it cannot trust
to behave as compiled: a corrupt or truncated file, another format or DSPy/freyr version, a
role whose signature changed. Any path the caller names is read (a path on the caller's own
command line is theirs to name; the server never loads a path a request gives). Names the
program's domain
reads from benchmark data (tool, API and parameter names) are stored by position and filled in
on load (``program.name_refs``), so an artifact copies none of the data and is refused against
another catalog.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from freyr_dspy._files import write_text_atomic
from freyr_dspy.artifacts._meta import FORMAT, ArtifactMeta, build_meta, check_versions
from freyr_dspy.artifacts._migrate import with_legacy_defaults
from freyr_dspy.artifacts._rebuild import ModelsArg, check_toolbox, program_from
from freyr_dspy.errors import ArtifactError, one_line
from freyr_dspy.program import FreyrProgram, fingerprint, map_strings, refer_names
from freyr_dspy.prompting import POOL_ATTRIBUTE, pool_state
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Toolbox

__all__ = ["load", "program_state", "read_artifact", "resolve_path", "save"]


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
        ArtifactError: missing, corrupt, truncated, or built by another format or DSPy/freyr
            version.
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
        meta = ArtifactMeta.model_validate(with_legacy_defaults(document.get("meta")))
    except ValidationError as exc:
        raise ArtifactError(f"artifact {resolved} has invalid metadata: {one_line(exc)}") from exc
    check_versions(meta, resolved)
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
        path: the artifact: a path (relative to the working directory), or a name looked
            up in ``settings.compiled_dir`` (or ``root``).
        models: other models than recorded: one id for every role, or role -> id or
            ``RoleModel``. Roles not named keep their recorded model and sampling.
        settings: where ``compiled/`` is and whether the DSPy cache is on.
        root: where a bare name is looked up, instead of ``settings.compiled_dir``.
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
        check_toolbox(meta, toolbox, path, allow_changed_tools)
    return program_from(meta, state, path, settings, models, toolbox)


def resolve_path(path: str | Path, root: Path) -> Path:
    """Resolve ``path``: as given when it exists or is absolute, else inside ``root``.

    ``compiled/x.json`` and ``/data/x.json`` are read where they are; a bare ``x.json`` that
    is not in the working directory is looked up in ``root`` (the project's ``compiled/``).
    """
    candidate = Path(path).expanduser()
    if not candidate.is_absolute() and not candidate.exists():
        candidate = root / candidate
    return candidate.resolve()


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


def _contains_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return any(k == key or _contains_key(v, key) for k, v in value.items())
    if isinstance(value, list):
        return any(_contains_key(v, key) for v in value)
    return False
