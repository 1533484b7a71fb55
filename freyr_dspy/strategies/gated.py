"""Strategy ``gated``: GeckOpt intent gating (Fore, Singh, Stamoulis 2024) around freyr or nlt.

library gate -> the inner selection (``freyr`` intents or ``nlt`` YES/NO) sees only the
tools of the chosen libraries -> parameters, execute, summary as usual. The gate saves the
input tokens of every tool it hides, on every later role call.

Fallback to the full catalog when the gate was wrong: it named no known library, or the
inner selection found nothing fitting among the gated tools (no tool, or only names of tools
the gate hid). A gate answer of ``none`` (no tool needed) goes straight to the chat reply.
A toolbox with a single library is not gated at all: there is nothing to hide.

``Gated(inner=Nlt())`` runs NLT's selection inside the gate; the default inner is FREYR's intent
selection without its confirm step (``Freyr(confirm=False)``). ``respond`` as for ``nlt``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from freyr_dspy.errors import ConfigError
from freyr_dspy.parsing import CONVERSATION
from freyr_dspy.roles.library import Gate, library_contract, read_gate
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.strategies import register_strategy
from freyr_dspy.strategies.base import Run, StrategyModule, unknown_tools_failure
from freyr_dspy.strategies.freyr import Freyr, confirm_intents, recognise_intents
from freyr_dspy.strategies.nlt import Nlt, act_and_reply, select_tools, selection_failure
from freyr_dspy.tools import Toolbox

__all__ = [
    "INNER_STRATEGIES",
    "Gated",
    "Selection",
    "needs_fallback",
    "open_gate",
    "run_gated",
    "select_through_gate",
]

logger = logging.getLogger(__name__)

INNER_STRATEGIES = ("freyr", "nlt")


@dataclass(frozen=True)
class Selection:
    """Tools an inner selector chose, names it wrote that are not in its toolbox, a failure."""

    tools: list[str]
    unknown: list[str]
    failure: Failure | None = None


def _select_freyr(run: Run) -> Selection:
    intents, unknown = recognise_intents(run)
    intents = confirm_intents(run, intents)  # only when the inner Freyr holds its confirm role
    tools = [name for name in intents if name != CONVERSATION]
    failure = None if tools else unknown_tools_failure("intent", unknown)
    return Selection(tools, unknown, failure)


def _select_nlt(run: Run) -> Selection:
    assessment = select_tools(run)
    return Selection(
        list(assessment.selected), list(assessment.unknown), selection_failure(assessment)
    )


_SELECTORS: dict[str, Callable[[Run], Selection]] = {"freyr": _select_freyr, "nlt": _select_nlt}


def open_gate(run: Run) -> Gate:
    """Ask the library role which libraries the request needs (typed by the toolbox's)."""
    prediction = run.call_role(
        "library",
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


def select_through_gate(run: Run, selector: Callable[[Run], Selection]) -> Selection | None:
    """Gate, select among the gated tools, fall back to the full catalog when needed.

    Returns None when the gate decided that the message needs no tool.
    """
    full = run.toolbox
    if len(full.libraries) < 2:
        return selector(run)
    gate = open_gate(run)
    if gate.no_tool:
        return None
    if gate.libraries:
        gated = full.subset(libraries=gate.libraries)
        run.toolbox = gated
        try:
            selection = selector(run)
        finally:
            run.toolbox = full
        if not needs_fallback(selection, gated, full):
            return selection
        logger.debug(
            "gate %s had nothing fitting; falling back to the full catalog", gate.libraries
        )
    return selector(run)


def run_gated(run: Run, inner: str = "freyr", *, respond: bool = True) -> Result:
    """Gate the catalog, then run the inner strategy's selection and calls.

    Raises:
        ConfigError: for an inner strategy other than ``freyr`` or ``nlt``.
    """
    if inner not in _SELECTORS:
        raise ConfigError(
            f"gated: unknown inner strategy {inner!r}; "
            f"expected one of {', '.join(INNER_STRATEGIES)}"
        )
    selection = select_through_gate(run, _SELECTORS[inner])
    if selection is None:
        return act_and_reply(run, [], respond=respond)
    return act_and_reply(run, selection.tools, selection.failure, respond=respond)


class Gated(StrategyModule):
    """GeckOpt's library gate around an inner selection strategy (see the module docstring).

    Args:
        inner: the strategy whose selection runs inside the gate: a ``Freyr`` or an ``Nlt``
            module, or its name (``freyr`` builds ``Freyr(confirm=False)``, the gate checking
            the plan instead); its roles also make the calls.
        respond: write a reply after the calls; off, the calls are the whole result.

    Raises:
        ConfigError: for an inner strategy other than FREYR or NLT.
    """

    name = "gated"
    description = "GeckOpt: pick libraries first; freyr or nlt then sees only their tools"

    def __init__(self, inner: StrategyModule | str = "freyr", respond: bool = True) -> None:
        super().__init__(("library",))
        inner_name = inner if isinstance(inner, str) else inner.name
        if inner_name not in _SELECTORS:
            raise ConfigError(
                f"gated: unknown inner strategy {inner_name!r}; "
                f"expected one of {', '.join(INNER_STRATEGIES)}"
            )
        self.inner = _INNER_DEFAULTS[inner]() if isinstance(inner, str) else inner
        self.respond = respond

    def config(self) -> dict[str, str | bool]:
        """The inner strategy's name, and ``respond`` when it is off."""
        config: dict[str, str | bool] = {"inner": self.inner.name}
        if not self.respond:
            config["respond"] = False
        return config

    def run(self, run: Run) -> Result:
        """Gate, select, call, reply."""
        return run_gated(run, self.inner.name, respond=self.respond)


#: The inner strategies built by name: FREYR's selection without its confirm step (the gate
#: narrows the plan instead), and NLT as it is.
_INNER_DEFAULTS: dict[str, Callable[[], StrategyModule]] = {
    "freyr": lambda: Freyr(confirm=False),
    "nlt": Nlt,
}

register_strategy(Gated)
