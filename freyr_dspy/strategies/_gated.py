"""Strategy ``gated``: GeckOpt intent gating (Fore, Singh, Stamoulis 2024) around freyr or nlt.

library gate -> the inner selection (``freyr`` intents or ``nlt`` YES/NO) sees only the
tools of the chosen libraries -> parameters, execute, summary as usual. The gate saves the
input tokens of every tool it hides, on every later role call.

Fallback to the full catalog when the gate was wrong: it named no known library, or the
inner selection found nothing fitting among the gated tools (no tool, or only names of tools
the gate hid). A gate answer of ``none`` (no tool needed) goes straight to the chat reply.
A toolbox with a single library is not gated at all: there is nothing to hide.

``Gated(inner=Nlt())`` runs NLT's selection inside the gate; the default inner is FREYR's intent
selection without its confirm step (``freyr+confirm=false``). The gate calls its inner strategy
as a module: ``inner.select`` on the gated tools, then ``inner.act``, so the inner strategy's
own settings (``freyr+require_stated``, ``nlt+exclude_blamed``) hold inside the
gate. ``respond`` as for ``nlt``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from freyr_dspy.errors import ConfigError
from freyr_dspy.roles import Gate, Role, library_contract, read_gate
from freyr_dspy.schemas import Result
from freyr_dspy.strategies import make_strategy, register_strategy
from freyr_dspy.strategies._base import PlanningStrategy, StrategyModule
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.strategies._nlt import Nlt
from freyr_dspy.strategies._policies import CallPolicy, PlanningPolicy
from freyr_dspy.strategies._run import Run
from freyr_dspy.strategies._steps import Replies, Selection
from freyr_dspy.tools import Toolbox

__all__ = ["INNER_STRATEGIES", "Gated"]

logger = logging.getLogger(__name__)

INNER_STRATEGIES = ("freyr", "nlt")


def open_gate(run: Run, role: Role) -> Gate:
    """Ask the library role which libraries the request needs (typed by the toolbox's)."""
    prediction = run.call(
        role,
        contract=library_contract(list(run.toolbox.libraries)),
        conversation=run.conversation,
        message=run.message,
        libraries=run.toolbox.library_catalog(),
    )
    return read_gate(prediction.selected, list(run.toolbox.libraries))


def needs_fallback(selection: Selection, gated: Toolbox, full: Toolbox) -> bool:
    """Tell whether the gated catalog had nothing fitting for what the selector wanted."""
    hidden = [name for name in selection.unknown if name not in gated and name in full]
    return not selection.tools or bool(hidden)


def select_through_gate(
    run: Run, gate_role: Role, selector: Callable[[Run], Selection]
) -> Selection | None:
    """Gate, select among the gated tools, fall back to the full catalog when needed.

    The selector sees a narrower run (``dataclasses.replace``: the same record of calls and
    cost, fewer tools). Returns None when the gate decided that the message needs no tool.
    """
    full = run.toolbox
    if len(full.libraries) < 2:
        return selector(run)
    gate = open_gate(run, gate_role)
    if gate.no_tool:
        return None
    if gate.libraries:
        gated = full.subset(libraries=gate.libraries)
        selection = selector(replace(run, toolbox=gated))
        if not needs_fallback(selection, gated, full):
            return selection
        logger.debug(
            "gate %s had nothing fitting; falling back to the full catalog", gate.libraries
        )
    return selector(run)


class Gated(PlanningStrategy):
    """GeckOpt's library gate around an inner selection strategy (see the module docstring).

    Args:
        inner: the strategy whose selection runs inside the gate, and whose roles make the
            calls: a ``Freyr`` or an ``Nlt`` module with any settings, its name (``freyr``
            builds FREYR without its confirm step, the gate checking the plan instead), or its
            config (``{"name": "freyr", "require_stated": True}``).
        respond: write a reply after the calls; off, the calls are the whole result.

    Raises:
        ConfigError: for an inner strategy other than FREYR or NLT.
    """

    library: Role

    name = "gated"
    description = "GeckOpt: pick libraries first; freyr or nlt then sees only their tools"

    def __init__(
        self, inner: StrategyModule | str | Mapping[str, Any] = "freyr", respond: bool = True
    ) -> None:
        super().__init__(("library",))
        self.inner = inner_strategy(inner)
        self.respond = respond

    def config(self) -> dict[str, Any]:
        """The inner strategy's name and settings, and ``respond`` when it is off."""
        config: dict[str, Any] = {"inner": {"name": self.inner.name, **self.inner.config()}}
        if not self.respond:
            config["respond"] = False
        return config

    def select(
        self, run: Run, *, conversation: str | None = None, require_tool: bool = False
    ) -> Selection:
        """The inner strategy's selection among the gated tools (none: the gate said no tool).

        The gate records the tools chosen, without FREYR's "conversation" entries.
        """
        inner = self.inner

        def selector(narrowed: Run) -> Selection:
            return inner.select(narrowed, conversation=conversation, require_tool=require_tool)

        selection = select_through_gate(run, self.library, selector)
        if selection is None:
            return Selection([], [])
        run.ledger.plan(selection.tools)
        return replace(selection, plan=selection.tools)

    def act(self, run: Run, selection: Selection) -> Result:
        """The inner strategy makes the calls and replies."""
        return self.inner.act(run, selection)

    def replies(self) -> Replies:
        """The inner strategy's reply roles."""
        return self.inner.replies()

    @property
    def rounds(self) -> int:
        """The inner strategy's planning rounds."""
        return self.inner.rounds

    @property  # type: ignore[override]
    def calling(self) -> CallPolicy:
        """The inner strategy's call policy: it makes the calls."""
        return self.inner.calling

    @calling.setter
    def calling(self, policy: CallPolicy) -> None:
        self.inner.calling = policy


def inner_strategy(inner: StrategyModule | str | Mapping[str, Any]) -> StrategyModule:
    """The strategy module ``inner`` describes (see ``Gated``).

    Raises:
        ConfigError: for a strategy that cannot run inside the gate.
    """
    if isinstance(inner, str):
        module = _INNER_DEFAULTS[inner]() if inner in _INNER_DEFAULTS else None
    elif isinstance(inner, Mapping):
        settings = dict(inner)
        name = str(settings.pop("name", ""))
        module = make_strategy(name, **settings) if name in INNER_STRATEGIES else None
    else:
        module = inner
    if not isinstance(module, PlanningStrategy):
        shown = inner if isinstance(inner, str) else getattr(inner, "name", None) or inner
        raise ConfigError(
            f"gated: unknown inner strategy {shown!r}; "
            f"expected one of {', '.join(INNER_STRATEGIES)}"
        )
    return module


#: The inner strategies built by name: FREYR's selection without its confirm step (the gate
#: narrows the plan instead), and NLT as it is.
_INNER_DEFAULTS: dict[str, Callable[[], StrategyModule]] = {
    "freyr": lambda: Freyr(PlanningPolicy(confirm=False)),
    "nlt": Nlt,
}

register_strategy(Gated)
