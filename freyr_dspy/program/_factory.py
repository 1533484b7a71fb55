"""``program_for``: a ready program for a model, with that model's preset - the one factory.

A program needs a strategy and a model per role. Whoever builds one from model ids (the CLI's
``run``/``chat``/``serve``/``eval``/``compile``, the Python API, the benchmark scripts) comes
here, so that a model runs its preset (``freyr_dspy.strategies._presets``) wherever nobody names
a strategy, and a Python user of the 0.5B gets the same program as ``freyr run`` does:

    program = FreyrProgram.for_model("embedded/qwen2.5-coder-0.5b", toolbox=box)

Models and sampling come as the command line writes them (``ROLE=ID``, ``ROLE.PARAM=VALUE``)
or as one ``Sampling`` for every role.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from freyr_dspy.program._assignment import main_model, resolve_label, role_assignment
from freyr_dspy.program._program import FreyrProgram
from freyr_dspy.program._spec import ProgramMaker, ProgramSpec, build_program
from freyr_dspy.schemas import Sampling
from freyr_dspy.settings import DEFAULT_MODEL
from freyr_dspy.tools import Toolbox

__all__ = ["program_for"]


def program_for(
    model: str | None = None,
    *,
    toolbox: Toolbox | None = None,
    domain: str | None = None,
    strategy: str | None = None,
    models: Iterable[str] = (),
    sampling: Iterable[str] | Sampling = (),
    api_base: str | None = None,
    max_retries: int | None = None,
    state_view: str | None = None,
    cache: bool = False,
    default_model: str = DEFAULT_MODEL,
    benchmark: ProgramMaker[Any] | None = None,
    eval_options: Any = None,
) -> FreyrProgram:
    """A program whose roles play ``model``, running the model's preset unless told otherwise.

    Args:
        model: the model every role plays (default: the last bare id of ``models``, else
            ``default_model``); its preset is the strategy when ``strategy`` is None.
        toolbox: the tools (a plain tool-use program when no ``domain`` is named).
        domain: a registered domain (its tools, unless ``toolbox`` is given, and its state).
        strategy: a strategy label (``freyr+asks``), ``preset`` (with switches after it), or
            None for the model's preset.
        models: ``ROLE=ID`` (one role) or ``ID`` (every role) specs, over ``model``.
        sampling: ``[ROLE.]PARAM=VALUE`` specs, or one ``Sampling`` for every role.
        api_base: the server of remote models.
        max_retries: retries of a failed call (default: the program's).
        state_view: the domain's state rendering the roles see.
        cache: whether the role models use the DSPy response cache.
        default_model: the model when neither ``model`` nor a bare spec names one.
        benchmark: builds the program for the strategy first (its domain, tools and prompt
            variant), with ``eval_options``.
        eval_options: the benchmark's options.

    Raises:
        ConfigError: no tools and no domain, or a malformed spec or strategy label.
        UnknownRoleError: a spec names a role the strategy does not have.
        UnknownModelError: a model id no backend understands.
    """
    models = tuple(models)
    chosen = model or main_model(models, default_model)
    if benchmark is None:
        return FreyrProgram.for_model(
            chosen,
            toolbox=toolbox,
            domain=domain,
            strategy=strategy,
            models=models,
            sampling=sampling,
            api_base=api_base,
            max_retries=max_retries,
            state_view=state_view,
            cache=cache,
        )
    label = resolve_label(strategy, chosen)
    spec = ProgramSpec(
        strategy=label,
        domain=domain,
        max_retries=max_retries,
        state_view=state_view,
    )
    program = build_program(
        spec, benchmark=benchmark, eval_options=eval_options, toolbox=toolbox, cache=cache
    )
    assignment = role_assignment(
        label,
        model=chosen,
        models=models,
        sampling=sampling,
        api_base=api_base,
        roles=program.role_names,
    )
    return program.apply_assignment(assignment, cache=cache)
