"""Turn an ``EvalConfig`` into contestants and units, and build each unit's program.

A *contestant* is what is compared side by side: a strategy (built fresh by the benchmark)
or a compiled program (loaded from its artifact). Every unit gets a fresh program, so no
state, history or demo can leak from one episode or run into another.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from freyr_dspy.artifacts import load
from freyr_dspy.benchmark import Benchmark, Episode, get_benchmark
from freyr_dspy.errors import ConfigError, DataError, UnknownRoleError
from freyr_dspy.evaluation._config import EvalConfig
from freyr_dspy.evaluation._units import UnitKey
from freyr_dspy.program import (
    FreyrProgram,
    ProgramSpec,
    main_model,
    parse_model_specs,
    parse_sampling_specs,
    resolve_label,
)
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import (
    DEFAULT_STRATEGY,
    PRESET_LABEL,
    get_strategy,
    load_strategies,
    parse_label,
)

__all__ = ["Plan", "Unit", "build_unit_program", "make_plan", "seeded"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Contestant:
    """A strategy or a compiled program, under the label reports use for it."""

    label: str
    #: A strategy name, with any settings switched on after ``+`` (``freyr+calibrate``).
    strategy: str | None = None
    program_path: Path | None = None


@dataclass(frozen=True)
class Unit:
    """One episode to run for one benchmark, contestant and run."""

    key: UnitKey
    benchmark: Benchmark
    contestant: Contestant
    episode: Episode


@dataclass(frozen=True)
class Plan:
    """The benchmarks, their contestants (in report order) and every unit to run."""

    benchmarks: dict[str, Benchmark]
    contestants: dict[str, tuple[Contestant, ...]]
    units: tuple[Unit, ...]


def make_plan(config: EvalConfig) -> Plan:
    """Resolve names, load episodes and list the units in execution order.

    Units are ordered benchmark -> run -> episode -> contestant, so the contestants of one
    episode run back to back (under the same machine load) and an interrupted evaluation
    holds comparable data for every contestant.

    Raises:
        UnknownNameError: for an unknown benchmark or strategy.
        ConfigError: for a strategy a benchmark cannot run, or a role no contestant has.
        DataError: for a benchmark whose episode ids are not unique.
    """
    benchmarks = {name: get_benchmark(name) for name in config.benchmarks}
    contestants = {name: _contestants(b, config) for name, b in benchmarks.items()}
    roles: set[str] = set()
    for name, benchmark in benchmarks.items():
        # NOTE: built once up front so that bad models, roles or artifacts fail before
        # any LM call is paid for.
        programs = {
            c.label: build_unit_program(benchmark, c, config, run=0) for c in contestants[name]
        }
        for program in programs.values():
            roles.update(program.role_names)
        _warn_unequal_retries(name, programs)
    _check_roles(config, roles)
    units: list[Unit] = []
    for name, benchmark in benchmarks.items():
        episodes = _episodes(benchmark, config)
        for run in range(config.runs):
            for episode in episodes:
                units.extend(
                    Unit(UnitKey(name, c.label, run, episode.id), benchmark, c, episode)
                    for c in contestants[name]
                )
    return Plan(benchmarks, contestants, tuple(units))


def _warn_unequal_retries(benchmark: str, programs: Mapping[str, FreyrProgram]) -> None:
    """Say so when contestants get different retry budgets: the comparison is then skewed.

    A compiled program keeps the ``max_retries`` it was compiled with, while a strategy gets
    the benchmark's; a program compiled with none ran every test step with one attempt
    beside an uncompiled program with four, and nothing in the report showed it.
    """
    budgets = {label: program.max_retries for label, program in programs.items()}
    if len(set(budgets.values())) > 1:
        listed = ", ".join(f"{label} {n}" for label, n in budgets.items())
        logger.warning("%s: contestants get different retry budgets (%s)", benchmark, listed)


def _contestants(benchmark: Benchmark, config: EvalConfig) -> tuple[Contestant, ...]:
    strategies = config.strategies or (() if config.programs else _available(benchmark))
    model = main_model(config.model_specs, config.default_model)
    found = [_strategy_contestant(benchmark, label, model) for label in strategies]
    found += [Contestant(_program_label(p, strategies), program_path=p) for p in config.programs]
    labels = [c.label for c in found]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"two contestants share a label: {', '.join(labels)}")
    return tuple(found)


def _strategy_contestant(benchmark: Benchmark, label: str, model: str) -> Contestant:
    """A strategy contestant; ``preset`` (with any switches) is ``model``'s preset."""
    strategy = resolve_label(label, model)
    name, _ = parse_label(strategy)
    get_strategy(name)  # unknown name -> UnknownNameError with "did you mean"
    if name not in benchmark.strategies:
        raise ConfigError(
            f"benchmark {benchmark.name!r} cannot run strategy {name!r}; "
            f"it runs {', '.join(benchmark.strategies)}"
        )
    return Contestant(label, strategy=strategy)


def _available(benchmark: Benchmark) -> tuple[str, ...]:
    """The benchmark's strategies that are installed (the default when none is named).

    ``freyr`` among them runs as the model's ``preset``: what a user gets without a flag.
    """
    registered = load_strategies()
    missing = [s for s in benchmark.strategies if s not in registered]
    if missing:
        logger.warning(
            "%s: skipping strategies that are not installed: %s", benchmark.name, ", ".join(missing)
        )
    return tuple(
        PRESET_LABEL if s == DEFAULT_STRATEGY else s
        for s in benchmark.strategies
        if s in registered
    )


def _program_label(path: Path, strategies: Sequence[str]) -> str:
    return f"program:{path.stem}" if path.stem in strategies else path.stem


def _episodes(benchmark: Benchmark, config: EvalConfig) -> list[Episode]:
    episodes = benchmark.episodes(config.options())
    ids = [e.id for e in episodes]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise DataError(benchmark.name, None, f"duplicate episode ids: {', '.join(duplicates)}")
    return episodes


def build_unit_program(
    benchmark: Benchmark, contestant: Contestant, config: EvalConfig, *, run: int
) -> FreyrProgram:
    """Build a fresh program for one unit, with its models and the run's seed.

    Raises:
        ArtifactError: when a compiled program cannot be loaded (``artifacts.load``).
        ConfigError: when its tools differ from the ones it was compiled for.
        UnknownModelError: for a model id no backend understands.
    """
    if contestant.program_path is not None:
        program = _load_artifact(contestant.program_path, config, benchmark)
    else:
        spec = ProgramSpec(strategy=str(contestant.strategy))
        program = FreyrProgram.from_spec(spec, benchmark=benchmark, eval_options=config.options())
    # NOTE: the roles are known once the program is built (they follow the benchmark's
    # strategy settings), so the assignment is resolved against them afterwards.
    assignment = resolve_assignment(program.role_names, program.assignment, config)
    program.apply_assignment({role: seeded(spec, run) for role, spec in assignment.items()})
    return program


def _load_artifact(path: Path, config: EvalConfig, benchmark: Benchmark) -> FreyrProgram:
    # a user's dataset gives the tools a program compiled for user tools runs with
    toolbox = getattr(benchmark, "program_toolbox", None)
    return load(path, settings=config.settings, toolbox=toolbox)


def resolve_assignment(
    roles: Sequence[str], base: Mapping[str, RoleModel], config: EvalConfig
) -> dict[str, RoleModel]:
    """Combine a program's own assignment (a compiled one has it) with the config's specs.

    Specs naming a role the program lacks are skipped here (another contestant has it);
    ``make_plan`` rejects roles that no contestant has.
    """
    models = parse_model_specs(_specs_for(config.model_specs, roles, _model_role), roles)
    sampling = parse_sampling_specs(_specs_for(config.sampling_specs, roles, _sampling_role), roles)
    assignment = {}
    for role in roles:
        prior = base.get(role)
        params = prior.sampling.model_dump(exclude_none=True) if prior else {}
        params.update(sampling.get(role, Sampling()).model_dump(exclude_none=True))
        assignment[role] = RoleModel(
            model=models.get(role) or (prior.model if prior else config.default_model),
            sampling=Sampling.model_validate(params),
            api_base=config.api_base or (prior.api_base if prior else None),
        )
    return assignment


def seeded(spec: RoleModel, run: int) -> RoleModel:
    """Give run ``run`` its own sampling seed where the seed decides the sample.

    Embedded models default to a fixed seed (reproducible ``freyr run``), so without this
    every run would repeat the same sample; an explicit ``seed`` is taken as the base of a
    reproducible series ``seed, seed + 1, ...``. Other backends keep their own randomness.
    """
    if not spec.model.startswith("embedded/") and spec.sampling.seed is None:
        return spec
    seed = (spec.sampling.seed or 0) + run
    return spec.model_copy(update={"sampling": spec.sampling.model_copy(update={"seed": seed})})


def _model_role(spec: str) -> str:
    role, sep, _ = spec.partition("=")
    return role.strip() if sep else ""


def _sampling_role(spec: str) -> str:
    return spec.partition("=")[0].rpartition(".")[0].strip()


def _specs_for(
    specs: Sequence[str], roles: Sequence[str], role_of: Callable[[str], str]
) -> list[str]:
    return [s for s in specs if role_of(s) in ("", *roles)]


def _check_roles(config: EvalConfig, known: set[str]) -> None:
    """Reject a spec naming a role that no contestant has (a typo would be ignored)."""
    named = [_model_role(s) for s in config.model_specs]
    named += [_sampling_role(s) for s in config.sampling_specs]
    for role in named:
        if role and role not in known:
            raise UnknownRoleError(role, sorted(known))
