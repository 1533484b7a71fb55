"""Strategies ``single``, ``two_step`` and ``backward``: CallNavi's baseline and its two pipelines.

* ``single``: the paper's one-step generation - one role sees the whole catalog (full specs
  by default; ``Single(catalog=...)`` changes it) and writes the whole call list.
* ``two_step`` (paper §7.1): a router picks the ordered API names from a compact catalog;
  then one ``call_parameters`` call per planned call fills its arguments, seeing only the
  routed APIs' specs. Unlike the original script, the routed specs are reset for every
  question (the original accumulated them across a domain's questions, a bug).
* ``backward`` (paper §7.2): see ``freyr_dspy.benchmarks.callnavi._backward``.
"""

from __future__ import annotations

from freyr_dspy.benchmarks.callnavi._backward import Backward
from freyr_dspy.benchmarks.callnavi._planning import (
    MAX_CALLS,
    CallNaviStrategy,
    api_toolbox,
    fill_call,
    finish,
    last_raw_output,
    plan_text,
    resolve_names,
    resolve_written,
)
from freyr_dspy.benchmarks.callnavi._roles import router_contract, single_call_contract
from freyr_dspy.benchmarks.callnavi._toolbox import ApiCatalogLevel, render_catalog
from freyr_dspy.roles import Role
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.strategies import Run, register_strategy

__all__ = []


def run_single(run: Run, role: Role, catalog_level: ApiCatalogLevel = "full") -> Result:
    """One role writes the whole call list from the catalog (the paper's baseline)."""
    box = api_toolbox(run)
    catalog = render_catalog(box, catalog_level)
    contract = single_call_contract(list(box), MAX_CALLS)
    prediction = run.call(role, contract=contract, question=run.message, catalog=catalog)
    # Names are resolved where they match an API; the parameters keep the model's shape.
    plan = {"API": resolve_written(box, prediction.API), "parameters": prediction.parameters}
    known = any(box.resolve(name) for name in plan["API"])
    failure = (
        None if known else Failure(kind="unknown_tool", detail="the answer named no known API")
    )
    return finish(run, box, plan, raw=last_raw_output(role), failure=failure)


def run_two_step(
    run: Run, router: Role, parameters: Role, catalog_level: ApiCatalogLevel = "brief"
) -> Result:
    """Route to an ordered API list, then fill each call seeing only the routed specs."""
    box = api_toolbox(run)
    catalog = render_catalog(box, catalog_level)
    contract = router_contract(box.names, MAX_CALLS)
    prediction = run.call(router, contract=contract, question=run.message, catalog=catalog)
    names, unknown = resolve_names(box, prediction.apis)
    if not names:
        detail = "router named no known API" + (f": {', '.join(unknown)}" if unknown else "")
        failure = Failure(kind="unknown_tool", detail=detail)
        return finish(run, box, {"API": [], "parameters": []}, failure=failure)
    text = plan_text(box, names)
    arguments = [fill_call(run, parameters, box, text, i, name) for i, name in enumerate(names)]
    return finish(run, box, {"API": names, "parameters": arguments})


class Single(CallNaviStrategy):
    """CallNavi's one-step baseline (full API specs unless ``catalog`` says otherwise)."""

    single: Role

    name = "single"
    description = "CallNavi one-step: the whole call list as JSON from the full catalog"
    default_catalog: ApiCatalogLevel = "full"

    def __init__(self, catalog: str | None = None) -> None:
        super().__init__(("single",), catalog)

    def run(self, run: Run) -> Result:
        """Write the whole call list in one call."""
        return run_single(run, self.single, self.catalog_level)


class TwoStep(CallNaviStrategy):
    """CallNavi's 2-step pipeline (a brief catalog for the router unless ``catalog`` says)."""

    router: Role
    call_parameters: Role

    name = "two_step"
    description = "CallNavi 2-step: router picks the API list, then parameters per call"

    def __init__(self, catalog: str | None = None) -> None:
        super().__init__(("router", "call_parameters"), catalog)

    def run(self, run: Run) -> Result:
        """Route, then fill each call."""
        return run_two_step(run, self.router, self.call_parameters, self.catalog_level)


for _strategy in (Single, TwoStep, Backward):
    register_strategy(_strategy)
