"""A conversation with a program: each message sees what the earlier ones asked, did and got.

Real agent work is rarely one request: "what is in my cart?", then "drop the cheapest item
and apply my coupon", then "check out to my home address" - each turn builds on what the
earlier calls returned and on the state they changed. A ``Session`` keeps the turns: the
user's message, each call made with what it returned, the reply; the next message is planned
with them as its conversation (``turns_of``), on the same tools - methods of a live app
(``Toolbox.from_object``) act on the app itself, so the state is the app's. Results are shown
whole up to ``RESULT_CHARS`` characters, longer ones cut with a marker, so a long listing
does not crowd a small model's context.

    cart = Cart(...)                                   # your app
    chat = Session(FreyrProgram.for_model(model, toolbox=Toolbox.from_object(cart)))
    chat.send("What is in my cart?")
    chat.send("Drop the cheapest item and apply my coupon SAVE10")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from freyr_dspy.program._program import FreyrProgram
from freyr_dspy.schemas import CallRecord, Result
from freyr_dspy.strategies import call_text
from freyr_dspy.tools import Toolbox

__all__ = ["RESULT_CHARS", "Session", "call_turn", "turns_of"]

#: Characters of one call's result an earlier turn shows; longer results are cut.
RESULT_CHARS = 400
#: What stands for the cut part of a result.
CUT = " [... cut]"


def turns_of(message: str, result: Result) -> list[dict[str, str]]:
    """The turns one request adds to a conversation: its message, calls, results and reply.

    As ``{"role", "content"}`` dicts: ``user``, then ``tool`` per call, then ``assistant``.
    """
    turns = [{"role": "user", "content": message}]
    turns += [{"role": "tool", "content": call_turn(call)} for call in result.calls]
    if result.reply:
        turns.append({"role": "assistant", "content": result.reply})
    return turns


def call_turn(call: CallRecord) -> str:
    """``view_cart() returned {...}``: one call as a later turn sees it, its result cut."""
    outcome = call.outcome.render()
    if len(outcome) > RESULT_CHARS:
        outcome = outcome[:RESULT_CHARS].rstrip() + CUT
    return f"{call_text(call)} returned {outcome}"


class Session:
    """A conversation with ``program`` (see the module docstring).

    Args:
        program: the program that answers every message.
        toolbox: the tools offered (default: the program's own).
        state: the state the first message starts from (a domain's state, if any).
        turns: earlier turns to start from, as ``{"role", "content"}`` dicts.
    """

    def __init__(
        self,
        program: FreyrProgram,
        *,
        toolbox: Toolbox | None = None,
        state: Any = None,
        turns: Sequence[dict[str, str]] = (),
    ) -> None:
        self.program = program
        self.toolbox = toolbox
        self.state = state
        self.turns: list[dict[str, str]] = list(turns)

    def send(self, message: str, *, toolbox: Toolbox | None = None) -> Result:
        """Answer ``message`` with the earlier turns in view; they then include it.

        ``toolbox``: the tools offered from this message on (a tool added to the app later).
        """
        if toolbox is not None:
            self.toolbox = toolbox
        result: Result = self.program(
            message=message, conversation=self.turns, state=self.state, toolbox=self.toolbox
        ).result
        self.turns += turns_of(message, result)
        self.state = result.state
        return result
