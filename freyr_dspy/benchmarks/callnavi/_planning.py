"""What every CallNavi strategy shares: the request's catalog, name resolution, the plan.

Nothing is executed: a strategy *plans* the call list ``{"API": [...], "parameters":
[...]}``. ``finish`` puts the plan into the result three ways: ``calls`` (one ``CallRecord``
per call, with a spec-only outcome), ``state.plan`` (the object exactly as produced, which
the metrics score) and ``reply`` (the raw model text for ``single``, the plan as JSON
otherwise; syntax validity is judged on it).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import dspy

from freyr_dspy.benchmarks.callnavi._domain import CallNaviState, state_toolbox
from freyr_dspy.benchmarks.callnavi._toolbox import ApiCatalogLevel, render_api
from freyr_dspy.errors import ConfigError
from freyr_dspy.prompting import match_names
from freyr_dspy.roles import Role
from freyr_dspy.schemas import CallRecord, Failure, Outcome, Result
from freyr_dspy.strategies import Run, StrategyModule
from freyr_dspy.tools import Toolbox, recorded_outcome

__all__ = [
    "MAX_CALLS",
    "CallNaviStrategy",
    "api_toolbox",
    "fill_call",
    "finish",
    "last_raw_output",
    "plan_text",
    "resolve_names",
    "resolve_written",
]

#: Most calls one plan may hold: the benchmark's longest gold plan has 5, and a tiny model
#: that loops on a name must not pay for more.
MAX_CALLS = 5

_LEVELS: tuple[ApiCatalogLevel, ...] = ("names", "brief", "full", "paper")


def api_toolbox(run: Run) -> Toolbox:
    """The catalog of this request: the program's toolbox, else the state's CallNavi domain.

    ``CallNaviProgram`` puts the state's domain into the toolbox before each call; a plain
    program over the ``callnavi`` domain has none, and the state (with its ``data_dir``)
    names the catalog.

    Raises:
        ConfigError: when neither names any API.
    """
    box = run.toolbox if len(run.toolbox) else state_toolbox(run.state)
    if box is None or not len(box):
        raise ConfigError(
            'no CallNavi catalog: give a state such as {"domain": "bank", "data_dir": '
            '"..."} or a program toolbox'
        )
    return box


def check_catalog_level(level: str) -> ApiCatalogLevel:
    """Return ``level`` as a catalog detail level.

    Raises:
        ConfigError: for an unknown level.
    """
    if level not in _LEVELS:
        raise ConfigError(f"unknown catalog level {level!r}; expected one of {', '.join(_LEVELS)}")
    checked: ApiCatalogLevel = level  # type: ignore[assignment]
    return checked


class CallNaviStrategy(StrategyModule):
    """What CallNavi's own strategies share: their roles and the catalog detail shown first.

    Args:
        roles: the roles the strategy calls.
        catalog: how much of each API the first role sees (``names``, ``brief``, ``full``,
            ``paper``); None for the strategy's own default.

    Raises:
        ConfigError: for an unknown catalog level.
    """

    #: The catalog detail the first role sees unless ``catalog`` says otherwise.
    default_catalog: ApiCatalogLevel = "brief"

    def __init__(self, roles: tuple[str, ...], catalog: str | None = None) -> None:
        super().__init__(roles)
        self.catalog = check_catalog_level(catalog) if catalog is not None else None

    @property
    def catalog_level(self) -> ApiCatalogLevel:
        """The catalog detail this strategy shows."""
        return self.catalog or self.default_catalog

    def config(self) -> dict[str, str]:
        """``{"catalog": level}`` when a level was chosen, else nothing."""
        return {"catalog": self.catalog} if self.catalog else {}


def resolve_names(box: Toolbox, names: Sequence[Any]) -> tuple[list[str], list[str]]:
    """Map written API names to catalog names (case/spacing tolerant), keeping repeats.

    Returns:
        (resolved names in order, at most ``MAX_CALLS``; names that match no API).
    """
    known, unknown = match_names([str(n) for n in names], box.names, special=(), keep_repeats=True)
    return known[:MAX_CALLS], unknown


def finish(
    run: Run,
    box: Toolbox,
    plan: dict[str, Any],
    *,
    raw: str | None = None,
    failure: Failure | None = None,
) -> Result:
    """Record the plan as calls, in the state and as the reply, and return the result."""
    params = plan.get("parameters")
    arguments = params if isinstance(params, list) else [params]
    for index, name in enumerate(plan.get("API", [])):
        args = arguments[index] if index < len(arguments) else {}
        known = box.resolve(str(name)) is not None
        outcome = (
            recorded_outcome(str(name))
            if known
            else Outcome(ok=False, message=f"unknown API {name!r}")
        )
        run.ledger.add_call(
            CallRecord(
                tool=str(name), arguments=args if isinstance(args, dict) else {}, outcome=outcome
            )
        )
    if isinstance(run.state, CallNaviState):
        run.ledger.commit(run.state.model_copy(update={"plan": plan}))
    reply = raw if raw is not None else json.dumps(plan, ensure_ascii=False)
    return run.result(reply, [str(n) for n in plan.get("API", [])], failure)


def fill_call(
    run: Run, role: Role, box: Toolbox, plan_text: str, index: int, name: str
) -> dict[str, Any]:
    """Ask ``call_parameters`` for one call's arguments (none for a zero-argument API)."""
    tool = box.get(name)
    if not tool.parameters:
        return {}
    prediction = run.call(
        role,
        question=run.message,
        plan=plan_text,
        call=f"call {index + 1}: {render_api(tool, 'full').removeprefix('- ')}",
    )
    arguments: dict[str, Any] = prediction.arguments
    return arguments


def plan_text(box: Toolbox, names: Sequence[str]) -> str:
    """The routed calls in order with their specs: all a parameter role gets to see."""
    return "\n".join(
        f"{i + 1}. {render_api(box.get(name), 'full').removeprefix('- ')}"
        for i, name in enumerate(names)
    )


def last_raw_output(role: Role) -> str | None:
    """The raw text the role's LM last produced (what the syntax metric judges)."""
    predictor = role.predict
    lm = predictor.lm or dspy.settings.lm
    history = getattr(lm, "history", None) or []
    if not history:
        return None
    outputs = history[-1].get("outputs") or []
    first = outputs[0] if outputs else None
    if isinstance(first, dict):
        first = first.get("text")
    return first if isinstance(first, str) else None


def resolve_written(box: Toolbox, names: Sequence[Any]) -> list[str]:
    """Each written name as the catalog spells it when it matches an API, else as written."""
    resolved = []
    for name in names:
        tool = box.resolve(str(name))
        resolved.append(tool.name if tool else str(name))
    return resolved
