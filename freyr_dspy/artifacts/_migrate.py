"""Artifacts written by earlier versions of freyr, read as what they meant then.

Older metadata left spec fields out (``with_legacy_defaults``), recorded every option of the
program for its strategy (``taken_settings``), was compiled under earlier wordings of a role's
signature (``REWORDED_SIGNATURES``), or keyed predictors by role before strategies held their
roles (``migrate_state_keys``). Each is read the way it ran when it was compiled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freyr_dspy.artifacts._meta import ArtifactMeta, role_signature_hashes
from freyr_dspy.errors import ArtifactError
from freyr_dspy.program import FreyrProgram, ProgramSpec
from freyr_dspy.strategies import accepted_config, get_strategy

__all__ = ["check_signatures", "migrate_state_keys", "taken_settings", "with_legacy_defaults"]

#: What a spec field meant when an older artifact left it out.
LEGACY_PROGRAM_DEFAULTS = {
    "adapter": "json",
    "ground_arguments": False,  # written before grounding existed: runs as compiled
    "catalog_level": "brief",
    "state_view": None,
    "options": {},
}


def with_legacy_defaults(meta: Any) -> Any:
    """``meta`` with the spec fields older artifacts did not write set to what they meant.

    A field missing from a spec means "keep the benchmark's choice" now; in an artifact it
    meant the value the program had then.
    """
    if not isinstance(meta, dict) or not isinstance(meta.get("program"), dict):
        return meta
    return {**meta, "program": {**LEGACY_PROGRAM_DEFAULTS, **meta["program"]}}


def taken_settings(spec: ProgramSpec) -> ProgramSpec:
    """``spec`` with only the settings its strategy takes.

    Artifacts written before strategies took typed settings recorded the program's whole
    options dict (a benchmark's data_dir, inner and respond, given to every strategy); a
    strategy is rebuilt from the entries it takes, as it read only those then.
    """
    settings = accepted_config(get_strategy(spec.strategy), spec.options or {})
    return spec.model_copy(update={"options": settings})


#: Role -> hashes of earlier wordings of its signature with the same fields. An artifact
#: carries its own instructions and field descriptions, so one compiled under an earlier
#: wording loads and runs as it was compiled.
REWORDED_SIGNATURES: dict[str, frozenset[str]] = {
    # Instructions on no-fit requests and repeated calls reworded (no field changed).
    "intent": frozenset({"94979756f690364e"}),
    "confirm": frozenset({"2a55270f75c03f84"}),
    # Told not to claim an action no tool carried out, then not to invent live data or
    # claim to be a person (no field changed).
    "chat": frozenset({"84ed0f84f008440e", "fb35b322d570f07b"}),
}


def check_signatures(meta: ArtifactMeta, program: FreyrProgram, path: str | Path) -> None:
    """Refuse an artifact whose roles' signatures changed since it was compiled.

    Earlier wordings of a signature with the same fields (``REWORDED_SIGNATURES``) still load.

    Raises:
        ArtifactError: naming the changed roles.
    """
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
