"""``ProgramSpec``: everything that builds a program except its trained state; one factory.

Every place that builds a program goes through ``build_program``: ``freyr run``/``chat``
(a domain), ``freyr compile``/``eval``/``search`` (a benchmark, whose ``make_program``
supplies the domain, the toolbox and any prompt variant), and ``freyr_dspy.load`` (the spec
an artifact recorded). A field left None keeps what the benchmark, or ``FreyrProgram``,
chooses; ``spec_of`` writes every field, so an artifact rebuilds exactly what was compiled.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.domains._plain import PLAIN_DOMAIN_NAME
from freyr_dspy.errors import ConfigError
from freyr_dspy.program._program import AdapterName, FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.strategies import make_strategy, parse_label
from freyr_dspy.tools import CatalogLevel, Toolbox

__all__ = ["ProgramMaker", "ProgramSpec", "build_program", "spec_of"]

OptionsT = TypeVar("OptionsT", contravariant=True)


class ProgramMaker(Protocol[OptionsT]):
    """What builds a spec's program first: a benchmark (``freyr_dspy.benchmark.Benchmark``).

    A seam rather than the ``Benchmark`` type: the benchmark contract returns programs, so the
    program package naming it would make the two import each other.
    """

    @property
    def name(self) -> str:
        """The benchmark's name (for error messages)."""
        ...

    def make_program(self, strategy: str, options: OptionsT) -> FreyrProgram:
        """Build a fresh (unassigned) program for a strategy."""
        ...


class ProgramSpec(BaseModel):
    """How to build a program: strategy and its settings, program settings, role models."""

    model_config = ConfigDict(extra="forbid")

    #: A strategy name, optionally with settings switched on after ``+`` (``freyr+replan``).
    strategy: str
    #: The strategy's settings (``StrategyModule.config()``); None keeps the benchmark's.
    options: dict[str, Any] | None = None
    #: Needed without a benchmark; with one, it must name the benchmark's domain.
    domain: str | None = None
    max_retries: int | None = None
    state_view: str | None = None
    catalog_level: str | None = None
    adapter: str | None = None
    ground_arguments: bool | None = None
    #: Role -> model and sampling. Not written with the spec: an artifact records it beside.
    assignment: dict[str, RoleModel] = Field(default_factory=dict, exclude=True)


def spec_of(program: FreyrProgram) -> ProgramSpec:
    """The complete spec of ``program`` (every field set, its assignment included)."""
    return ProgramSpec(
        strategy=program.strategy_name,
        options=program.strategy.config(),
        domain=program.domain.name,
        max_retries=program.max_retries,
        state_view=program.state_view,
        catalog_level=program.catalog_level,
        adapter=program.adapter,
        ground_arguments=program.ground_arguments,
        assignment=dict(program.assignment),
    )


def build_program(
    spec: ProgramSpec,
    *,
    benchmark: ProgramMaker[OptionsT] | None = None,
    eval_options: OptionsT | None = None,
    cache: bool = False,
    toolbox: Toolbox | None = None,
) -> FreyrProgram:
    """Build the program ``spec`` describes.

    Args:
        spec: what to build.
        benchmark: builds the program for the strategy first (domain, toolbox, prompt
            variant); without one, ``spec.domain`` names the domain.
        eval_options: the benchmark's options (data directory, ``extra``); required with a
            benchmark.
        cache: whether the role models use the DSPy cache.
        toolbox: the tools of a program without a benchmark (the only tools of a plain
            tool-use program, whose spec names the ``tools`` domain or none).

    Raises:
        ConfigError: a spec with neither benchmark nor domain nor toolbox, a plain
            tool-use spec without a toolbox, a domain the benchmark does not
            have, or a strategy setting (or ``+`` switch) the strategy does not take.
        UnknownRoleError: the assignment names a role the strategy does not have.
        UnknownModelError: for a model id no backend understands.
    """
    name, switches = parse_label(spec.strategy)
    spec = spec.model_copy(update={"strategy": name})
    program = _base_program(spec, benchmark, eval_options, toolbox)
    options = spec.options
    if switches:  # laid over the settings the benchmark (or the spec) gave the strategy
        options = (program.strategy.config() if options is None else options) | switches
    if options is not None and program.strategy.config() != options:
        # NOTE: a strategy rebuilt here loses what the benchmark changed in its roles (NLT's
        # paper prompt); the benchmark's own settings make the same config and are kept.
        program.use_strategy(make_strategy(name, **options))
    _apply_settings(program, spec)
    if spec.assignment:
        program.apply_assignment(spec.assignment, cache=cache)
    return program


def _base_program(
    spec: ProgramSpec,
    benchmark: ProgramMaker[OptionsT] | None,
    eval_options: OptionsT | None,
    toolbox: Toolbox | None,
) -> FreyrProgram:
    if benchmark is None:
        strategy = make_strategy(spec.strategy, **(spec.options or {}))
        if spec.domain not in (None, PLAIN_DOMAIN_NAME):
            return FreyrProgram(spec.domain, strategy=strategy, toolbox=toolbox)
        if toolbox is None:
            raise ConfigError(
                "a program for your own tools needs them: pass toolbox=... "
                "(on the command line --tools FILE, --mcp or --tools-module)"
            )
        return FreyrProgram(toolbox=toolbox, strategy=strategy)
    if eval_options is None:
        raise ConfigError(f"building a {benchmark.name} program needs its evaluation options")
    program = benchmark.make_program(spec.strategy, eval_options)
    if spec.domain is not None and program.domain.name != spec.domain:
        raise ConfigError(
            f"benchmark {benchmark.name} builds programs of domain {program.domain.name!r}, "
            f"not {spec.domain!r}"
        )
    return program


def _apply_settings(program: FreyrProgram, spec: ProgramSpec) -> None:
    if spec.max_retries is not None:
        program.max_retries = spec.max_retries
    if spec.state_view is not None:
        program.domain.renderer(spec.state_view)  # fail early on an unknown view
        program.state_view = spec.state_view
    if spec.catalog_level is not None:
        program.catalog_level = cast(CatalogLevel, spec.catalog_level)
    if spec.adapter is not None:
        program.adapter = cast(AdapterName, spec.adapter)
    if spec.ground_arguments is not None:
        program.ground_arguments = spec.ground_arguments
