"""The demo pools a compile builds: gold demos of the user's rows, with ``false`` verdicts too.

Each training row is replayed through the program with an oracle that answers every role
from the row's gold calls (``freyr_dspy.compiling._gold``), which gives one demo per role
call, tagged with the tools it was made for. Replayed that way, the ``confirm`` role is only
ever shown the tools the request wants, so every verdict it demonstrates is ``true`` - right
before the scored ``true``/``false`` decision a preset's abstention rests on. So the rows are
replayed once more following the plans the uncompiled program really made (its verdicts
name every tool it planned): ``confirm`` is then shown those tools and answers from the gold,
``false`` for a planned tool the request does not ask for. For each request the pool keeps
that demo in place of the all-``true`` one, so the check learns to say no where the model
was wrong to plan a tool.

The demos go into a pool on each role the ``PoolSpec`` names (the fixed demos are emptied):
at run time a request is shown demos of its own tools only (``contrastive``), so a request to
a toolbox no row was written for gets none - the preset as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dspy

from freyr_dspy.compiling._candidates import PoolSpec
from freyr_dspy.compiling._gold import detached_copy, gold_demos
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.compiling._optimizers import OptimizerConfig, trimmed_demo
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import attach_pool, detach_pool, request_field

__all__ = ["pooled_demos", "with_pool"]


def with_pool(
    program: FreyrProgram,
    examples: Sequence[dspy.Example],
    metric: BenchmarkMetric,
    spec: PoolSpec,
    optimizer: OptimizerConfig,
    *,
    plans: Mapping[str, Sequence[str]] | None = None,
) -> FreyrProgram:
    """A copy of ``program`` whose ``spec.roles`` choose demos from a pool of ``examples``.

    ``plans`` (row id -> the tools the uncompiled program planned) adds the ``confirm``
    demos with ``false`` verdicts (module docstring). The copy's LMs are ``program``'s.
    """
    pooled = detached_copy(program)
    demos = pooled_demos(pooled, examples, metric, spec.roles, plans=plans)
    for role in pooled.role_names:
        for name, predictor in pooled.role(role).named_predictors():
            detach_pool(predictor)
            predictor.demos = []
            if role in spec.roles:
                kept = [trimmed_demo(d, predictor, optimizer) for d in demos.get((role, name), [])]
                attach_pool(predictor, kept, spec.k, select=spec.select)
    return pooled


def pooled_demos(
    program: FreyrProgram,
    examples: Sequence[dspy.Example],
    metric: BenchmarkMetric,
    roles: Sequence[str],
    *,
    plans: Mapping[str, Sequence[str]] | None = None,
) -> dict[tuple[str, str], list[dspy.Example]]:
    """(role, predictor name within it) -> the demos of ``roles``; see the module docstring."""
    gold = gold_demos(program, examples, metric)
    checked = (
        gold_demos(program, examples, metric, plans=plans, roles=("confirm",))
        if plans and "confirm" in roles
        else {}
    )
    by_role: dict[tuple[str, str], list[dspy.Example]] = {}
    for role in roles:
        if role not in program.role_names:
            continue
        for name, predictor in program.role(role).named_predictors():
            full = _full_name(program, predictor)
            demos = gold.get(full, [])
            if full in checked:
                demos = _preferring(checked[full], demos, request_field(predictor.signature))
            by_role[(role, name)] = demos
    return by_role


def _full_name(program: FreyrProgram, predictor: dspy.Predict) -> str:
    return next(name for name, p in program.named_predictors() if p is predictor)


def _preferring(
    first: Sequence[dspy.Example], rest: Sequence[dspy.Example], field: str | None
) -> list[dspy.Example]:
    """``first``, then the demos of ``rest`` whose request none of ``first`` answers."""
    if field is None:
        return [*first, *rest]
    answered = {demo.get(field) for demo in first}
    return [*first, *(demo for demo in rest if demo.get(field) not in answered)]
