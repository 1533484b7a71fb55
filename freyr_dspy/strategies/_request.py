"""``Request``: one message to answer, as a frozen value, with what the caller asks of the answer.

A program answers a ``Request`` with ``FreyrProgram.answer`` (``freyr serve`` builds one per
HTTP request; an app may build its own). Beyond the message and the earlier turns it says:

* which tools are offered and how they may be used (``tool_choice``: ``auto``, the program
  decides; ``none``, a reply in words; ``required``, a call; ``named``, a call of
  ``function``);
* the calls already made for this message and their results (``answered``), when the caller
  executes the calls itself and comes back with the results; ``rounds`` counts those rounds,
  and ``replan`` says the calls were sent while later ones waited for their results;
* the request's own sampling and reply contract (``overrides``), applied call by call.

Nothing in it changes the program: two requests may run on one program at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

from freyr_dspy.errors import ConfigError
from freyr_dspy.schemas import CallRecord
from freyr_dspy.strategies._grounding import Evidence
from freyr_dspy.strategies._run import CallOverrides, Ending, Run
from freyr_dspy.tools import Toolbox

__all__ = ["Request", "RunStarter", "ToolChoice"]

#: How the offered tools may be used (see the module docstring).
ToolChoice = Literal["auto", "none", "required", "named"]

Turn = Mapping[str, str]


@dataclass(frozen=True)
class Request:
    """One message to answer and what the caller asks of the answer (see the module docstring).

    Raises:
        ConfigError: for ``required`` or ``named`` without tools, or a ``function`` that is
            not among them.
    """

    message: str
    #: The turns before the message, as ``{"role", "content"}`` dicts.
    conversation: tuple[Turn, ...] = ()
    #: The tools offered (None: none; the program then replies in words).
    toolbox: Toolbox | None = None
    tool_choice: ToolChoice = "auto"
    #: The tool ``named`` asks for.
    function: str | None = None
    #: The turns after the message: the calls made for it and their results, as text.
    since: tuple[Turn, ...] = ()
    #: The calls made for the message and answered by the caller, with their results.
    answered: tuple[CallRecord, ...] = ()
    #: Rounds of calls made for the message so far.
    rounds: int = 0
    #: The answered calls were sent while later calls waited for their results.
    replan: bool = False
    #: The tools of the calls that waited (made next, even where a new plan leaves them out).
    waited: tuple[str, ...] = ()
    overrides: CallOverrides = field(default_factory=CallOverrides)

    def __post_init__(self) -> None:
        if self.tool_choice in ("required", "named") and self.toolbox is None:
            raise ConfigError(f"tool_choice {self.tool_choice!r} needs tools")
        if self.tool_choice == "named" and (
            self.toolbox is None or self.function not in self.toolbox.names
        ):
            raise ConfigError(f"tool_choice 'named': {self.function!r} is not an offered tool")

    @property
    def turns(self) -> tuple[Turn, ...]:
        """Every turn but the message: the earlier ones, then those since it."""
        return (*self.conversation, *self.since)

    @property
    def answered_tools(self) -> set[str]:
        """The tools whose calls the caller has answered."""
        return {call.tool for call in self.answered}

    def answers(self, call: CallRecord) -> bool:
        """Whether the caller already answered this very call (same tool, same arguments)."""
        return _call_key(call) in self._answered_keys

    @cached_property
    def _answered_keys(self) -> frozenset[str]:
        return frozenset(_call_key(call) for call in self.answered)

    @cached_property
    def evidence(self) -> Evidence:
        """What the user has said: the message and the turns before it (read once)."""
        return Evidence.of(self.message, *(turn["content"] for turn in self.conversation))


def _call_key(call: CallRecord) -> str:
    return call.tool + json.dumps(call.arguments, sort_keys=True)


class RunStarter(Protocol):
    """Starts a ``Run`` of the request (the program's domain, state and the request's overrides).

    ``turns``: the turns the roles see before the message; ``ending``: how the run ends.
    """

    def __call__(self, turns: tuple[Turn, ...], toolbox: Toolbox, ending: Ending) -> Run:
        """A fresh run of the request over ``toolbox``."""
        ...
