"""A streamed answer while its program runs: the reply's words and each tool call, as they come.

The program runs in the worker thread; ``LiveAnswer`` hears of its progress there and hands
each new piece to the event loop that writes the response:

* the reply's words while the chat or summary role writes them (the chat role's only when the
  request offers no tool: a reply in words to a request with tools is checked whole and may
  be replaced, see ``_ReplyWatch``): a DSPy callback installs a
  text listener (``freyr_dspy.text_stream``) around those roles' calls only, the role's JSON
  answer is read as it comes (``reply_text.FieldText``) and released through ``HeldText``
  (no invented number goes out). Only where a reply in words may be the answer: ``tool_choice``
  ``auto`` or ``none``, and no ``response_format`` (a structured reply is checked whole first);
* each tool call once its attempts are over and it is certain to be sent: valid against the
  tool's schema, not answered already, not one that may wait for results (``deferred``; from
  such a call on, calls wait for the end), sent when the next call is recorded (its id must
  say whether later calls wait); without ``parallel_tool_calls`` the one call comes at the end.

When the program is done, ``rest`` gives what the final answer holds beyond what was streamed,
so that the streamed pieces put together are the answer (the calls keep their streamed ids).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from freyr_dspy.roles import Role
from freyr_dspy.schemas import CallRecord
from freyr_dspy.serve._protocol import Choice, ToolCall
from freyr_dspy.serve._reply_guard import HeldText
from freyr_dspy.serve._reply_text import FieldText
from freyr_dspy.serve._translate import ToolPlan, tool_call
from freyr_dspy.strategies import CallWords, Evidence, Request, waits_for_results, watching_calls
from freyr_dspy.text_stream import listening

__all__ = ["Delta", "LiveAnswer"]

logger = logging.getLogger(__name__)

#: Between words streamed and a final reply that does not continue them (a reply replaced
#: because it invented a result): the final reply follows as a paragraph of its own.
REPLACED = "\n\n"


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed answer: words of the reply, or a tool call at ``index``."""

    text: str = ""
    call: ToolCall | None = None
    index: int = 0


class LiveAnswer:
    """The bridge between a running program (worker thread) and its streamed response.

    Args:
        loop: the event loop writing the response.
        request: the request the program answers.
        plan: what ``tool_choice`` and ``parallel_tool_calls`` ask.
        words: whether a reply in words may stream (no ``response_format``).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        request: Request,
        plan: ToolPlan,
        *,
        words: bool = True,
    ) -> None:
        self.loop = loop
        self.deltas: asyncio.Queue[Delta] = asyncio.Queue()
        self.request, self.toolbox, self.plan = request, request.toolbox, plan
        self.words = words and plan.mode in ("auto", "none")
        #: What went out (written in the worker thread, read once the program is done).
        self.text = ""
        self.calls: list[ToolCall] = []
        #: The calls the program recorded so far (a later one may wait for their results).
        self._recorded: list[CallRecord] = []
        self._calls_held = False
        self._pending: CallRecord | None = None

    @property
    def offers_tools(self) -> bool:
        """Whether the request offers tools (a reply in words is then checked whole)."""
        return self.toolbox is not None and len(self.toolbox) > 0

    # ------------------------------------------------------------- in the worker thread

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Hear the program run in the block: its reply roles' words and its calls."""
        callbacks = [*dspy.settings.get("callbacks", []), _ReplyWatch(self)]
        with dspy.context(callbacks=callbacks), watching_calls(self.call_recorded):
            yield

    def call_recorded(self, record: CallRecord) -> None:
        """Send the call recorded before this one, now that it is known whether calls wait.

        A call goes out one record late: whether the client must send its result back for
        another round (its id says so, ``translate.WAITING``) is known only when a later call
        turns out to wait for results. In ``calls_only`` runs the program ends right after its
        last call, so the lag costs the last call nothing; the final answer sends what is left.
        """
        before, self._recorded = self._recorded, [*self._recorded, record]
        if self._calls_held or not record.outcome.ok or self.toolbox is None:
            return
        if self.request.answers(record):
            return
        if waits_for_results(self.request, record, before):
            self._calls_held = True  # it waits for results: the calls before it say so
            self._flush(waiting=(record.tool,))
            return
        made = tool_call(record, self.toolbox)
        if made is None or not self.plan.parallel:
            return  # without parallel calls, only the final answer knows which one goes
        self._flush(waiting=())
        self._pending = record

    def _flush(self, *, waiting: Sequence[str]) -> None:
        """Send the call held back, with the id its round calls for."""
        record, self._pending = self._pending, None
        made = tool_call(record, self.toolbox, waiting=waiting) if record is not None else None
        if made is not None:
            self.calls.append(made)
            self._send(Delta(call=made, index=len(self.calls) - 1))

    def send_text(self, text: str) -> None:
        """Send words of the reply."""
        if text:
            self.text += text
            self._send(Delta(text=text))

    def _send(self, delta: Delta) -> None:
        try:
            self.loop.call_soon_threadsafe(self.deltas.put_nowait, delta)
        except RuntimeError:  # the loop is closed: the server is stopping, nobody listens
            logger.debug("a streamed piece had no listener left")

    # ------------------------------------------------------------- in the event loop

    def rest(self, choice: Choice) -> list[Delta]:
        """The final answer's pieces not streamed yet (it takes the streamed calls' ids)."""
        text = self._rest_of_text(choice.message.content)
        deltas = [Delta(text=text)] if text else []
        final = list(choice.message.tool_calls or [])
        streamed = {(c.function.name, c.function.arguments): c.id for c in self.calls}
        index = len(self.calls)
        for position, call in enumerate(final):
            sent_id = streamed.pop((call.function.name, call.function.arguments), None)
            if sent_id is not None:
                final[position] = call.model_copy(update={"id": sent_id})
            else:
                deltas.append(Delta(call=call, index=index))
                index += 1
        if streamed:
            logger.warning("calls streamed but not in the answer: %s", list(streamed))
        choice.message.tool_calls = final or None
        return deltas

    def _rest_of_text(self, content: str | None) -> str:
        if content is None or content == self.text:
            return ""
        if content.startswith(self.text):
            return content[len(self.text) :]
        return REPLACED + content if self.text else content


class _ReplyWatch(BaseCallback):
    """Listen to the chat and summary roles' text while they run (one reply per request)."""

    def __init__(self, live: LiveAnswer) -> None:
        self.live = live
        self.open: dict[str, ExitStack] = {}
        self.replied = False

    def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        """Start listening when a reply role starts writing its first reply."""
        if not isinstance(instance, Role) or not instance.writes_reply or not self.live.words:
            return
        if self.replied:
            return  # a second reply would not continue the first: it comes whole
        given = inputs.get("kwargs", {})
        over_outcomes = "outcomes" in given  # a report of calls, checked against them
        if not over_outcomes and self.live.offers_tools:
            # Words instead of a call although tools were offered: the reply is checked for
            # results nobody looked up, and may be replaced whole ("The weather in Paris is
            # sunny, 22 °C" from the 0.5B): it goes out once checked, not word by word.
            return
        self.replied = True
        evidence = calls = None
        if over_outcomes:  # its reply is checked for invented results
            texts = (str(given.get(name, "")) for name in ("message", "outcomes", "state"))
            evidence = Evidence.of(*texts)
            calls = CallWords.of_text(str(given.get("outcomes", "")))
        field, held = FieldText("reply"), HeldText(evidence, calls)

        def heard(piece: str) -> None:
            text = field.feed(piece)
            self.live.send_text(held.push(text) + (held.finish() if field.done else ""))

        stack = ExitStack()
        stack.enter_context(listening(heard))
        self.open[call_id] = stack

    def on_module_end(
        self, call_id: str, outputs: Any | None, exception: Exception | None = None
    ) -> None:
        """Stop listening when the role is done."""
        stack = self.open.pop(call_id, None)
        if stack is not None:
            stack.close()
