"""Strategy ``backward``: backward thinking (CallNavi §7.2), without the original's gold leak.

1. ``final_call`` names the API that completes the request (the *last* call).
2. For each planned call, newest first: ``call_parameters`` writes its arguments, then
   ``missing_inputs`` names the parameters whose values the question does not give.
3. For each missing parameter, ``supporting_call`` picks the API that returns it (or
   ``none``); that call is planned *before* the one that needs it, the needing parameter
   becomes the ``"$$$"`` placeholder, and the new call gets steps 2-3 in turn.

Planning stops at ``MAX_CALLS`` calls. To keep the prompt small, ``supporting_call`` sees
only the ``CANDIDATES`` APIs whose return values (then names) look most like the missing
parameter, ranked by string similarity - a cheap, deterministic pre-selection in place of
the whole catalog. The original script put the gold answer into its first prompt; here the
roles only ever see the question and the catalog.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.benchmarks.callnavi._data import PLACEHOLDER
from freyr_dspy.benchmarks.callnavi._planning import (
    MAX_CALLS,
    CallNaviStrategy,
    api_toolbox,
    fill_call,
    finish,
    plan_text,
)
from freyr_dspy.benchmarks.callnavi._roles import (
    final_call_contract,
    missing_inputs_contract,
    supporting_call_contract,
)
from freyr_dspy.benchmarks.callnavi._toolbox import ApiCatalogLevel, render_api, render_catalog
from freyr_dspy.roles import Role
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.strategies import Run
from freyr_dspy.tools import Tool, Toolbox, normalize_name

__all__ = ["Backward", "rank_candidates"]

#: APIs offered to ``supporting_call`` for one missing value.
CANDIDATES = 8
#: Missing parameters followed up per call (a tiny model may call every parameter missing).
MAX_MISSING_PER_CALL = 2
NONE = "none"


@dataclass
class _Call:
    """One planned call; ``filled`` once its arguments are written."""

    api: str
    arguments: dict[str, Any] = field(default_factory=dict)
    filled: bool = False


def run_backward(run: Run, strategy: Backward, catalog_level: ApiCatalogLevel = "brief") -> Result:
    """Plan from the final call backwards, adding supporting calls for missing inputs.

    ``strategy`` holds the roles the pipeline calls.
    """
    box = api_toolbox(run)
    catalog = render_catalog(box, catalog_level)
    contract = final_call_contract(box.names)
    prediction = run.call(
        strategy.final_call, contract=contract, question=run.message, catalog=catalog
    )
    final = box.resolve(prediction.final_api)
    if final is None:
        detail = f"final_call named no known API: {prediction.final_api!r}"
        failure = Failure(kind="unknown_tool", detail=detail)
        return finish(run, box, {"API": [], "parameters": []}, failure=failure)
    plan = [_Call(final.name)]
    while (call := next((c for c in reversed(plan) if not c.filled), None)) is not None:
        _expand(run, strategy, box, plan, call)
    return finish(
        run, box, {"API": [c.api for c in plan], "parameters": [c.arguments for c in plan]}
    )


def _expand(run: Run, strategy: Backward, box: Toolbox, plan: list[_Call], call: _Call) -> None:
    """Fill one call's arguments and plan supporting calls for its missing inputs."""
    names = [c.api for c in plan]
    text = plan_text(box, names)
    call.arguments = fill_call(
        run, strategy.call_parameters, box, text, _position(plan, call), call.api
    )
    call.filled = True
    tool = box.get(call.api)
    for parameter in _missing(run, strategy.missing_inputs, tool, call.arguments)[
        :MAX_MISSING_PER_CALL
    ]:
        if len(plan) >= MAX_CALLS:
            return
        supporting = _supporting_api(run, strategy.supporting_call, box, tool, parameter)
        if supporting is None:
            continue
        call.arguments[parameter] = PLACEHOLDER
        position = _position(plan, call)
        # An API planned earlier already provides the value; otherwise call it just before.
        if supporting.name not in [c.api for c in plan[:position]]:
            plan.insert(position, _Call(supporting.name))


def _position(plan: list[_Call], call: _Call) -> int:
    return next(i for i, c in enumerate(plan) if c is call)


def _missing(run: Run, role: Role, tool: Tool, arguments: dict[str, Any]) -> list[str]:
    """The call's parameters the model says the question does not give."""
    if not tool.parameters:
        return []
    spec = render_api(tool, "full").removeprefix("- ")
    written = json.dumps(arguments, ensure_ascii=False)
    prediction = run.call(
        role,
        contract=missing_inputs_contract([p.name for p in tool.parameters]),
        question=run.message,
        call=f"{spec}\narguments so far: {written}",
    )
    by_key = {normalize_name(p.name): p.name for p in tool.parameters}
    found = [by_key.get(normalize_name(str(name))) for name in prediction.missing]
    return list(dict.fromkeys(name for name in found if name))


def _supporting_api(
    run: Run, role: Role, box: Toolbox, needing: Tool, parameter: str
) -> Tool | None:
    """Ask which API returns ``parameter``, among the most similar candidates."""
    candidates = rank_candidates(box, parameter, exclude=needing.name)
    if not candidates:
        return None
    listing = "\n".join(render_api(tool, "full") for tool in candidates)
    prediction = run.call(
        role,
        contract=supporting_call_contract([tool.name for tool in candidates], NONE),
        question=run.message,
        needed=f"the value of {parameter!r} for the call {needing.name}",
        candidates=f"{listing}\n- {NONE}: no API returns it",
    )
    answer = str(prediction.supporting_api)
    if normalize_name(answer) in {NONE, ""}:
        return None
    tool = box.resolve(answer)
    # A call cannot provide its own input; any other API of the catalog is accepted.
    return tool if tool is not None and tool.name != needing.name else None


def rank_candidates(
    box: Toolbox, parameter: str, *, exclude: str = "", limit: int = CANDIDATES
) -> list[Tool]:
    """APIs most likely to return ``parameter``: best match of its returns, then its name."""
    target = normalize_name(parameter)

    def score(tool: Tool) -> tuple[float, float]:
        returns = _return_names(tool)
        by_returns = max((_similar(target, r) for r in returns), default=0.0)
        return by_returns, _similar(target, normalize_name(tool.name))

    ranked = sorted((t for t in box if t.name != exclude), key=score, reverse=True)
    return ranked[:limit]


def _return_names(tool: Tool) -> list[str]:
    returns = tool.extra.get("returns")
    if isinstance(returns, dict):
        return [normalize_name(str(k)) for k in returns]
    if isinstance(returns, list):
        return [normalize_name(str(v)) for v in returns]
    return [normalize_name(str(returns))] if returns else []


def _similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


class Backward(CallNaviStrategy):
    """CallNavi's backward-thinking pipeline (a brief catalog unless ``catalog`` says)."""

    final_call: Role
    call_parameters: Role
    missing_inputs: Role
    supporting_call: Role

    name = "backward"
    description = (
        "CallNavi backward thinking: final API first, then supporting calls for "
        "missing inputs, with $$$ where an earlier call's result goes"
    )

    def __init__(self, catalog: str | None = None) -> None:
        super().__init__(
            ("final_call", "call_parameters", "missing_inputs", "supporting_call"), catalog
        )

    def run(self, run: Run) -> Result:
        """Plan from the final call backwards."""
        return run_backward(run, self, self.catalog_level)
