"""The search space of a model-assignment study, and one point of it (``TrialConfig``).

Parameter names are stable because they land in Optuna storages shared by many workers:
``strategy``, ``model.<role>``, ``sampling.<role>.temperature`` / ``top_p`` / ``top_k``
(``sampling.<param>`` with shared sampling), ``max_retries`` and ``num_demos``. A dimension
with a single possible value is fixed, not suggested, so it neither widens the sampler's
space nor shows up in parameter importances.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from freyr_dspy.errors import ConfigError
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.settings import DEFAULT_MODEL

if TYPE_CHECKING:
    from optuna.trial import Trial

__all__ = [
    "ALL_ROLES",
    "BaselinePicker",
    "Picker",
    "SearchSpace",
    "TrialConfig",
    "TrialPicker",
    "baseline",
    "parse_bounds",
    "parse_candidates",
    "parse_numbers",
    "space_digest",
    "suggest",
    "supports_top_k",
]

#: Candidate-list key that applies to every role without a list of its own.
ALL_ROLES = "*"

#: Providers whose backends honour ``top_k`` (others silently drop it, so it is not searched).
TOP_K_PROVIDERS = frozenset({"embedded", "fake", "ollama", "ollama_chat"})

#: Grid steps: a coarse grid makes repeated configurations likely, which the cache serves free.
TEMPERATURE_STEP = 0.1
TOP_P_STEP = 0.05


@dataclass(frozen=True)
class SearchSpace:
    """What a study may vary.

    Args:
        candidates: role -> model ids; the ``"*"`` key applies to every other role. Roles with
            no list use ``default_model``.
        strategies: strategies to choose from (their roles decide which models are chosen).
        temperature: (low, high) searched on a 0.1 grid, or None for the backend default.
        top_p: (low, high) searched on a 0.05 grid, or None for the backend default.
        top_k: choices for backends that honour top-k (llama.cpp, Ollama), or None.
        max_retries: (low, high) retries of a failed tool call.
        num_demos: (low, high) few-shot demos per role (needs a demo provider when high > 0).
        shared_sampling: one temperature/top-p/top-k for all roles instead of one per role,
            which keeps the space small when only a dozen trials are affordable.
        default_model: the model of roles without candidates.
        seed: sampling seed given to every LM, so a configuration is reproducible.
        max_tokens: output cap of every LM (fixed, not searched); None: the backend's.
        strategy_roles: strategy -> its roles as the searched benchmark builds it (``gated``
            holds ``tool_selection`` on NLT, ``intent`` elsewhere); a strategy not named here
            has the roles of its default configuration. Derived, so not part of ``describe``.
    """

    candidates: Mapping[str, tuple[str, ...]]
    strategies: tuple[str, ...] = ("freyr",)
    temperature: tuple[float, float] | None = (0.0, 1.0)
    top_p: tuple[float, float] | None = (0.5, 1.0)
    top_k: tuple[int, ...] | None = (10, 40, 100)
    max_retries: tuple[int, int] = (0, 3)
    num_demos: tuple[int, int] = (0, 0)
    shared_sampling: bool = False
    default_model: str = DEFAULT_MODEL
    seed: int | None = 0
    max_tokens: int | None = None
    strategy_roles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.strategies:
            raise ConfigError("the search space needs at least one strategy")
        for role, ids in self.candidates.items():
            if not ids:
                raise ConfigError(f"no candidate models for role {role!r}")
        for name, bounds in (
            ("temperature", self.temperature),
            ("top_p", self.top_p),
            ("max_retries", self.max_retries),
            ("num_demos", self.num_demos),
        ):
            if bounds is not None and not 0 <= bounds[0] <= bounds[1]:
                raise ConfigError(f"bad range for {name}: {bounds}; expected 0 <= LOW <= HIGH")

    def roles_of(self, strategy: str) -> tuple[str, ...]:
        """The roles that need a model when ``strategy`` is chosen."""
        if strategy in self.strategy_roles:
            return tuple(self.strategy_roles[strategy])
        from freyr_dspy.strategies import strategy_roles

        return strategy_roles(strategy)

    def models_for(self, role: str) -> tuple[str, ...]:
        """The candidate models of one role."""
        return tuple(
            self.candidates.get(role) or self.candidates.get(ALL_ROLES) or (self.default_model,)
        )

    def all_models(self) -> list[str]:
        """Every distinct candidate model, in first-seen order."""
        ids = [m for ms in self.candidates.values() for m in ms] or [self.default_model]
        return list(dict.fromkeys(ids))

    def describe(self) -> dict[str, Any]:
        """A JSON description of the space (stored with the study, hashed into its name)."""
        return {
            "candidates": {k: list(v) for k, v in sorted(self.candidates.items())},
            "strategies": list(self.strategies),
            "temperature": _listed(self.temperature),
            "top_p": _listed(self.top_p),
            "top_k": _listed(self.top_k),
            "max_retries": list(self.max_retries),
            "num_demos": list(self.num_demos),
            "shared_sampling": self.shared_sampling,
            "default_model": self.default_model,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }


class TrialConfig(BaseModel):
    """One configuration: a strategy, its retries and demos, and a model per role."""

    model_config = ConfigDict(frozen=True)

    strategy: str
    max_retries: int
    num_demos: int = 0
    assignment: dict[str, RoleModel]

    def canonical(self) -> str:
        """A stable JSON text of the configuration: equal configurations, equal text."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def digest(self) -> str:
        """A short hash of ``canonical()``."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:12]

    def models_text(self) -> str:
        """``role=model`` pairs, for tables."""
        return " ".join(f"{role}={spec.model}" for role, spec in self.assignment.items())


class Picker(Protocol):
    """Chooses each dimension's value: an Optuna trial, or the baseline's defaults."""

    def categorical(self, name: str, choices: Sequence[Any], default: Any) -> Any:
        """Choose one of ``choices``."""
        ...

    def float(self, name: str, low: float, high: float, step: float, default: float) -> float:
        """Choose a float on the grid ``low, low + step, ..., high``."""
        ...

    def int(self, name: str, low: int, high: int, default: int) -> int:
        """Choose an integer in ``[low, high]``."""
        ...


class TrialPicker:
    """Suggest every dimension through an Optuna trial."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial

    def categorical(self, name: str, choices: Sequence[Any], default: Any) -> Any:
        """Suggest a categorical parameter."""
        return self.trial.suggest_categorical(name, list(choices))

    def float(self, name: str, low: float, high: float, step: float, default: float) -> float:
        """Suggest a float on a grid (rounded: grid arithmetic leaves 0.30000000000000004)."""
        return round(float(self.trial.suggest_float(name, low, high, step=step)), 4)

    def int(self, name: str, low: int, high: int, default: int) -> int:
        """Suggest an integer."""
        return int(self.trial.suggest_int(name, low, high))


@dataclass
class BaselinePicker:
    """Take each dimension's default and record it as an Optuna parameter (for enqueueing)."""

    params: dict[str, Any] = field(default_factory=dict)

    def categorical(self, name: str, choices: Sequence[Any], default: Any) -> Any:
        """Record and return the default."""
        self.params[name] = default
        return default

    def float(self, name: str, low: float, high: float, step: float, default: float) -> float:
        """Record and return the default, clamped into the range."""
        return self._record(name, min(max(default, low), high))

    def int(self, name: str, low: int, high: int, default: int) -> int:
        """Record and return the default, clamped into the range."""
        return int(self._record(name, min(max(default, low), high)))

    def _record(self, name: str, value: Any) -> Any:
        self.params[name] = value
        return value


def suggest(picker: Picker, space: SearchSpace) -> TrialConfig:
    """Choose one configuration of ``space`` with ``picker``.

    The strategy is chosen first because it decides which roles need a model.
    """
    strategy = _choose(picker, "strategy", space.strategies, space.strategies[0])
    roles = space.roles_of(strategy)
    models = {
        role: _choose(picker, f"model.{role}", space.models_for(role), space.models_for(role)[0])
        for role in roles
    }
    if space.shared_sampling:
        top_k = any(supports_top_k(m) for m in models.values())
        shared = _sampling(picker, "sampling", space, with_top_k=top_k)
        sampling = {r: _drop_top_k(shared, m) for r, m in models.items()}
    else:
        sampling = {
            r: _sampling(picker, f"sampling.{r}", space, with_top_k=supports_top_k(m))
            for r, m in models.items()
        }
    return TrialConfig(
        strategy=strategy,
        max_retries=_integer(picker, "max_retries", space.max_retries, default=3),
        num_demos=_integer(picker, "num_demos", space.num_demos, default=0),
        assignment={r: RoleModel(model=m, sampling=sampling[r]) for r, m in models.items()},
    )


def baseline(space: SearchSpace) -> tuple[TrialConfig, dict[str, Any]]:
    """The default configuration and its Optuna parameters.

    Defaults are what ``freyr run`` does without options: the first candidate of each role,
    the first strategy, greedy decoding (temperature 0, top-p 1, top-k 40), 3 retries and no
    demos, each clamped into the searched range.
    """
    picker = BaselinePicker()
    config = suggest(picker, space)
    return config, picker.params


def supports_top_k(model_id: str) -> bool:
    """Tell whether the backend of ``model_id`` honours ``top_k``."""
    return model_id.split("/", 1)[0] in TOP_K_PROVIDERS


def space_digest(space: SearchSpace, *extra: Any) -> str:
    """A short hash of the space and any extra context (objectives, episodes)."""
    text = json.dumps([space.describe(), *extra], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _choose(picker: Picker, name: str, choices: Sequence[Any], default: Any) -> Any:
    return choices[0] if len(choices) == 1 else picker.categorical(name, choices, default)


def _integer(picker: Picker, name: str, bounds: tuple[int, int], default: int) -> int:
    low, high = bounds
    return low if low == high else picker.int(name, low, high, default)


def _sampling(picker: Picker, prefix: str, space: SearchSpace, *, with_top_k: bool) -> Sampling:
    values: dict[str, Any] = {"seed": space.seed, "max_tokens": space.max_tokens}
    for param, bounds, step, default in (
        ("temperature", space.temperature, TEMPERATURE_STEP, 0.0),
        ("top_p", space.top_p, TOP_P_STEP, 1.0),
    ):
        if bounds is not None:
            low, high = bounds
            values[param] = (
                low if low == high else picker.float(f"{prefix}.{param}", low, high, step, default)
            )
    if with_top_k and space.top_k:
        default_k = 40 if 40 in space.top_k else space.top_k[0]
        values["top_k"] = _choose(picker, f"{prefix}.top_k", space.top_k, default_k)
    return Sampling(**values)


def _drop_top_k(sampling: Sampling, model_id: str) -> Sampling:
    return sampling if supports_top_k(model_id) else sampling.model_copy(update={"top_k": None})


def _listed(value: tuple[Any, ...] | None) -> list[Any] | None:
    return None if value is None else list(value)


def parse_candidates(
    specs: Sequence[str], all_models: str | None = None
) -> dict[str, tuple[str, ...]]:
    """Read ``ROLE=ID,ID`` specs (and ``ID,ID`` for every role) into candidate lists.

    Raises:
        ConfigError: for a spec without ``=`` or without any model id.
    """
    lists: dict[str, tuple[str, ...]] = {}
    if all_models:
        lists[ALL_ROLES] = _ids(all_models, "--candidates-all")
    for spec in specs:
        role, sep, ids = spec.partition("=")
        if not sep or not role.strip():
            raise ConfigError(
                f"bad candidates {spec!r}; expected ROLE=ID,ID (e.g. "
                "intent=embedded/qwen2.5-coder-0.5b,embedded/qwen2.5-coder-1.5b)"
            )
        lists[role.strip()] = _ids(ids, spec)
    return lists


def parse_bounds(text: str, name: str) -> tuple[float, float] | None:
    """Read ``LOW,HIGH`` (or one value, or ``off``) into bounds; ``off`` gives None.

    Raises:
        ConfigError: for values that are not numbers, or more than two of them.
    """
    values = parse_numbers(text, name)
    if values is None:
        return None
    if len(values) > 2:
        raise ConfigError(f"--{name} takes LOW,HIGH, got {text!r}")
    return (values[0], values[-1])


def parse_numbers(text: str, name: str) -> tuple[float, ...] | None:
    """Read comma-separated numbers (``off`` gives None).

    Raises:
        ConfigError: for a value that is not a number.
    """
    if text.strip().lower() in {"off", "none", ""}:
        return None
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise ConfigError(f"--{name} expects numbers like 0,1 or 'off', got {text!r}") from exc


def _ids(text: str, where: str) -> tuple[str, ...]:
    ids = tuple(dict.fromkeys(i.strip() for i in text.split(",") if i.strip()))
    if not ids:
        raise ConfigError(f"no model ids in {where!r}")
    return ids
