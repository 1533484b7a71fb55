"""``ProgramSpec``: a program's saved form - everything that builds it but its trained state.

``FreyrProgram.spec()`` writes it (every field set, so an artifact rebuilds exactly what was
compiled) and ``FreyrProgram.from_spec`` reads it back: ``freyr_dspy.load`` (the spec an
artifact recorded), ``freyr compile``/``eval``/``search`` (with a benchmark, whose
``make_program`` supplies the domain, the toolbox and any prompt variant). A field left None
keeps what the benchmark, or ``FreyrProgram``, chooses.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.schemas import RoleModel

__all__ = ["ProgramSpec"]


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
