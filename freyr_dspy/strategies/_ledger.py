"""The ledger of one run: what the program has done so far, appended to through its methods.

A ``Run``'s inputs (the request, its tools, its settings) are frozen; everything a request
changes lives here: the plan, the calls made and the state they left, each role's cost, the
asks no call answers and the calls left for the next round. Every write goes through a method
named for what happened (``plan``, ``add_call``, ``commit``, ...), so "who changed this" has
one answer per kind of change, and a narrower run (``dataclasses.replace(run, toolbox=...)``)
shares its parent's ledger: what it records, the parent sees.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.schemas import CallRecord, OpenAsk, RoleUsage, Verdict
from freyr_dspy.strategies._call_watch import call_recorded

__all__ = ["Ledger"]


@dataclass
class Ledger:
    """What one run has done so far (see the module docstring)."""

    #: The state the request started from, then the state the last successful call left.
    state: Any = None
    calls: list[CallRecord] = field(default_factory=list)
    usage: dict[str, RoleUsage] = field(default_factory=dict)
    #: The tools planned so far, kept here so a model failure later in the run still reports them.
    intents: list[str] = field(default_factory=list)
    #: Asks of the request no call is planned for (the reply names them as not done).
    open_asks: list[OpenAsk] = field(default_factory=list)
    #: Planned calls left for the next round: their values come from results not yet asked for.
    waiting: list[str] = field(default_factory=list)
    #: Whether a planned call may wait for the next round (one is left to plan in).
    can_wait: bool = False
    #: The scored checks of planned tools, in the order they were made.
    verdicts: list[Verdict] = field(default_factory=list)
    #: (tool, argument, value) copies of a description's example already refused once.
    refused_copies: set[tuple[str, str, str]] = field(default_factory=set)

    def plan(self, intents: Iterable[str]) -> list[str]:
        """Record the tools planned (the latest plan replaces the one before); return it."""
        self.intents = list(intents)
        return self.intents

    def add_call(self, record: CallRecord) -> None:
        """Record a call whose attempts are over (a ``watching_calls`` listener hears of it)."""
        self.calls.append(record)
        call_recorded(record)

    def retry_last(self, record: CallRecord) -> None:
        """Replace the last call with ``record``: its retry, which carries its attempts."""
        self.calls[-1] = record

    def add_made_elsewhere(self, records: Iterable[CallRecord]) -> None:
        """Record calls someone else made (a client that ran them and sent their results).

        Listeners are not told: these calls are answered, not this run's to send.
        """
        self.calls.extend(records)

    def judge(self, verdicts: Iterable[Verdict]) -> None:
        """Record scored checks of planned tools."""
        self.verdicts.extend(verdicts)

    def add_usage(self, role: str, spent: RoleUsage) -> None:
        """Count ``spent`` to ``role``."""
        self.usage[role] = self.usage.get(role, RoleUsage()) + spent

    def commit(self, state: Any) -> None:
        """The state a successful call left (or a step that keeps its plan in the state)."""
        self.state = state

    def leave_open(self, asks: Sequence[OpenAsk]) -> None:
        """Record the asks no call is planned for."""
        self.open_asks = list(asks)

    def allow_waiting(self, allowed: bool) -> None:
        """Whether a planned call whose values are stated nowhere may wait for a next round."""
        self.can_wait = allowed

    def wait(self, tool: str) -> None:
        """Leave a planned call of ``tool`` for the next round."""
        self.waiting.append(tool)

    def next_round(self, *, may_wait: bool) -> None:
        """A new planning round: nothing waits any more; ``may_wait`` as ``allow_waiting``."""
        self.waiting.clear()
        self.can_wait = may_wait

    def refuse_copies(self, copies: Iterable[tuple[str, str, str]]) -> None:
        """Remember example copies refused once: the same copy written again stands."""
        self.refused_copies.update(copies)
