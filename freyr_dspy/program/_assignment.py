"""Role -> model assignments from ``ROLE=ID`` and ``ROLE.param=value`` specs (CLI, search)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from freyr_dspy.errors import ConfigError, UnknownRoleError
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import PRESET_LABEL, default_strategy, strategy_roles

__all__ = [
    "bare_model_ids",
    "build_assignment",
    "main_model",
    "override_assignment",
    "parse_model_specs",
    "parse_sampling_specs",
    "resolve_label",
    "role_assignment",
]


def bare_model_ids(specs: Iterable[str]) -> list[str]:
    """The ``ID`` specs (every role), in order, as ``parse_model_specs`` reads them."""
    return [spec for spec in specs if "=" not in spec]


def main_model(specs: Iterable[str], default_model: str) -> str:
    """The model the roles not named play: the last bare ``--model`` id, else the default."""
    bare = bare_model_ids(specs)
    return bare[-1].strip() if bare else default_model


def parse_model_specs(specs: Iterable[str], roles: Sequence[str]) -> dict[str, str]:
    """Read ``ROLE=ID`` (one role) or ``ID`` (every role) specs.

    Raises:
        UnknownRoleError: for a role the program does not have.
        ConfigError: for an empty model id.
    """
    models: dict[str, str] = {}
    for spec in specs:
        role, sep, model = spec.partition("=")
        # "ollama_chat/x" has no '='; a bare id applies to every role
        if not sep:
            role, model = "", spec
        if not model.strip():
            raise ConfigError(f"empty model id in {spec!r}; expected ROLE=MODEL_ID")
        for name in _target_roles(role, roles):
            models[name] = model.strip()
    return models


def parse_sampling_specs(specs: Iterable[str], roles: Sequence[str]) -> dict[str, Sampling]:
    """Read ``ROLE.param=value`` or ``param=value`` (every role) specs.

    Raises:
        ConfigError: for an unknown parameter or a value of the wrong type.
    """
    values: dict[str, dict[str, str]] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep:
            raise ConfigError(f"bad sampling spec {spec!r}; expected ROLE.PARAM=VALUE")
        role, _, param = key.rpartition(".")
        for name in _target_roles(role, roles):
            values.setdefault(name, {})[param] = value
    result = {}
    for role, params in values.items():
        try:
            result[role] = Sampling.model_validate(params)
        except ValueError as exc:
            first = str(exc).splitlines()
            raise ConfigError(f"bad sampling for role {role!r}: {' '.join(first[:3])}") from exc
    return result


def build_assignment(
    roles: Sequence[str],
    *,
    default_model: str,
    model_specs: Iterable[str] = (),
    sampling_specs: Iterable[str] = (),
    api_base: str | None = None,
) -> dict[str, RoleModel]:
    """Combine defaults and specs into one ``RoleModel`` per role."""
    models = parse_model_specs(model_specs, roles)
    sampling = parse_sampling_specs(sampling_specs, roles)
    return {
        role: RoleModel(
            model=models.get(role, default_model),
            sampling=sampling.get(role, Sampling()),
            api_base=api_base,
        )
        for role in roles
    }


def override_assignment(
    recorded: Mapping[str, RoleModel],
    *,
    model_specs: Iterable[str] = (),
    sampling_specs: Iterable[str] = (),
    api_base: str | None = None,
) -> dict[str, RoleModel]:
    """``recorded`` with only what the specs name changed (e.g. a compiled program's models).

    A role not named keeps its model; a sampling spec changes only the parameters it sets.
    """
    roles = list(recorded)
    models = parse_model_specs(model_specs, roles)
    sampling = parse_sampling_specs(sampling_specs, roles)
    changed = {}
    for role, spec in recorded.items():
        params = sampling[role].model_dump(exclude_unset=True) if role in sampling else {}
        changed[role] = spec.model_copy(
            update={
                "model": models.get(role, spec.model),
                "sampling": spec.sampling.model_copy(update=params),
                "api_base": api_base or spec.api_base,
            }
        )
    return changed


def resolve_label(strategy: str | None, model: str) -> str:
    """The strategy label a program on ``model`` runs: ``strategy``, or the model's preset.

    ``preset`` (alone or with switches after it: ``preset+require_stated``) names the preset
    explicitly, so a comparison can list it beside other strategies.
    """
    if strategy is None:
        return default_strategy(model)
    name, plus, switches = strategy.partition("+")
    if name == PRESET_LABEL:
        return default_strategy(model) + (plus + switches if plus else "")
    return strategy


def role_assignment(
    label: str,
    *,
    model: str,
    models: Iterable[str] = (),
    sampling: Iterable[str] | Sampling = (),
    api_base: str | None = None,
    roles: tuple[str, ...] | None = None,
) -> dict[str, RoleModel]:
    """A model per role of strategy ``label``: ``model``, except where ``models`` name another.

    Raises:
        UnknownRoleError: a spec names a role the strategy does not have.
        ConfigError: a malformed model or sampling spec.
    """
    names = roles if roles is not None else strategy_roles(label)
    specs = () if isinstance(sampling, Sampling) else tuple(sampling)
    assignment = build_assignment(
        names, default_model=model, model_specs=models, sampling_specs=specs, api_base=api_base
    )
    if isinstance(sampling, Sampling):
        assignment = {r: s.model_copy(update={"sampling": sampling}) for r, s in assignment.items()}
    return assignment


def _target_roles(role: str, roles: Sequence[str]) -> list[str]:
    if not role:
        return list(roles)
    if role not in roles:
        raise UnknownRoleError(role, roles)
    return [role]
