"""The tools of one run: the arguments a model wrote, checked against what was said, then run.

``ToolExecutor`` is the one way a strategy runs a tool. Before a call it can leave out the
optional values nobody stated (``grounded``), refuse once a value copied from the tool
description's example (``refusal``), and name the required values nobody gave (``unstated``)
or the last error written back as a value (``echoed``); ``run`` executes the tool and commits
the state it leaves to the run's ledger only when the call succeeds. What counts as said is
read afresh at each check: the message, the conversation, the state and the outcomes so far
(``freyr_dspy.strategies._grounding.Evidence``). A value not in the form the description shows
("6:45pm" for "HH:MM, e.g. '07:30'") is refused once too (``_formats``), and so is a call the
request says takes a value from an earlier call's result when none of its values carries
anything of that result (``_references``). Grounding and the guards follow the call policy's
``ground_arguments``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from freyr_dspy.schemas import Outcome
from freyr_dspy.strategies._formats import misformed
from freyr_dspy.strategies._grounding import (
    Evidence,
    copied_examples,
    echoed_error,
    examples_of,
    ground_arguments,
    tool_without_examples,
    unstated_required,
)
from freyr_dspy.strategies._ledger import Ledger
from freyr_dspy.strategies._references import (
    copied_calls,
    gave_result,
    misses_result,
    refers_back,
)
from freyr_dspy.tools import Tool, Toolbox

__all__ = ["ToolExecutor"]


@dataclass(frozen=True)
class ToolExecutor:
    """Checks and runs the calls of one run (see the module docstring)."""

    toolbox: Toolbox
    ledger: Ledger
    #: What the user and the tools have said so far, read at each check.
    said: Callable[[], Evidence]
    #: Ground arguments and refuse copied examples (``CallPolicy.ground_arguments``).
    grounding: bool = True
    #: The request, read for values it says come from an earlier call's result.
    message: str = ""

    def grounded(
        self, tool_name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], list[str]]:
        """The model's arguments without optional values nobody stated, and the names dropped.

        Unchanged without grounding, and for an unknown tool (validation reports it).
        """
        tool = self.toolbox.resolve(tool_name)
        if tool is None or not self.grounding:
            return dict(arguments), []
        return ground_arguments(tool, arguments, self.said())

    def refusal(self, tool_name: str, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` are refused: a value is the description's example, never stated.

        Small models copy "e.g. 'Weekly sync'" into the title instead of the user's words. The
        copy goes back as an error so the model writes the value again; the same copy written
        a second time stands, as the user may have meant it. None when nothing was copied, for
        an unknown tool, and without grounding.
        """
        tool = self.toolbox.resolve(tool_name)
        if tool is None or not self.grounding:
            return None
        examples = examples_of(tool)
        copied = self._copied(tool, arguments, examples) if examples else None
        return (
            copied
            or self._copied_call(tool, arguments)
            or self._misformed(tool, arguments)
            or self._without_result(tool, arguments)
        )

    def _copied(
        self, tool: Tool, arguments: dict[str, Any], examples: frozenset[str]
    ) -> str | None:
        copies = copied_examples(examples, arguments, self.said())
        fresh = self._refused_once((tool.name, name, value) for name, value in copies)
        if not fresh:
            return None
        # The values are not repeated: a small model copies from its feedback as well.
        names = ", ".join(dict.fromkeys(name for _, name, _ in fresh))
        return (
            f"{names}: copied from the example in the description of {tool.name}, not a value "
            "the user gave; write the value the request gives"
        )

    def _misformed(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """Why a value is refused once: it is not in the form the description shows.

        See ``freyr_dspy.strategies._formats``: "6:45pm" for "24-hour time HH:MM, e.g.
        '07:30'". The example is named as a form to follow; written again, the value stands.
        """
        candidates = misformed(tool, arguments)
        keys = ((tool.name, name, f"form:{arguments[name]}") for name, _ in candidates)
        fresh = {name for _, name, _ in self._refused_once(keys)}
        found = [(name, example) for name, example in candidates if name in fresh]
        if not found:
            return None
        shown = "; ".join(f"{name} is written like {example!r}" for name, example in found)
        return (
            f"{shown} in the description of {tool.name}: write the value the request gives "
            "in that form"
        )

    def _copied_call(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """Why a value is refused once: it is the text of a call, not a value.

        Shown "tool: list_notes(tag='househunt') returned [...]", Qwen 1.5B wrote
        ``note_id="list_notes(tag='househunt') returned"`` for "read me the last one".
        """
        copied = copied_calls(arguments, self.toolbox.names)
        fresh = self._refused_once((tool.name, n, f"call:{arguments[n]}") for n in copied)
        if not fresh:
            return None
        names = ", ".join(name for _, name, _ in fresh)
        return (
            f"{names}: the text of a call, not a value; write the value itself, as the call's "
            "result gives it"
        )

    def _without_result(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """Why a call is refused once: it leaves out the result the request says it takes.

        "... add a todo titled 'pay' followed by the converted amount": with the conversion's
        result in view, Qwen wrote the title "pay". The earlier call is named and its result
        quoted (cut): told only that a value was missing, the 1.5B wrote "pay" again.
        """
        for call in self.ledger.calls:
            earlier = self.toolbox.resolve(call.tool)
            if call.tool == tool.name or earlier is None or not gave_result(call):
                continue
            key = (tool.name, "result", call.tool)
            if key in self.ledger.refused_copies or not refers_back(self.message, earlier):
                continue
            if misses_result(arguments, call.outcome.message, self.message):
                self._refused_once([key])
                shown = _cut(call.outcome.message)
                return (
                    f"the request takes a value from what {call.tool} returned ({shown}), and "
                    "no value of this call has it: write that value into the call"
                )
        return None

    def _refused_once(self, found: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """The (tool, argument, what) refusals of ``found`` not made before, now recorded.

        Each refusal is made once: the same value written again stands.
        """
        fresh = [key for key in dict.fromkeys(found) if key not in self.ledger.refused_copies]
        self.ledger.refuse_copies(fresh)
        return fresh

    def shown_after_refusal(self, tool: Tool) -> Tool:
        """``tool`` as the model is shown it once a copy was refused: without its examples.

        What it cannot see, it cannot copy again.
        """
        return tool_without_examples(tool)

    def unstated(self, tool_name: str, arguments: dict[str, Any]) -> list[str]:
        """The required text arguments whose values nobody stated (none for an unknown tool)."""
        tool = self.toolbox.resolve(tool_name)
        return [] if tool is None else unstated_required(tool, arguments, self.said())

    def echoed(self, arguments: dict[str, Any], error: str) -> list[str]:
        """The arguments whose values repeat ``error`` rather than anything the user said."""
        return echoed_error(arguments, error, self.said()) if error else []

    def execute(self, tool_name: str, arguments: dict[str, Any]) -> Outcome:
        """Run one call unless a value is a copied example (the refusal is then its error)."""
        refusal = self.refusal(tool_name, arguments)
        if refusal is not None:
            return Outcome(ok=False, message=refusal)
        return self.run(tool_name, arguments)

    def run(self, tool_name: str, arguments: dict[str, Any]) -> Outcome:
        """Run one call already checked; commit the state it leaves only on success."""
        execution = self.toolbox.execute(tool_name, arguments, self.ledger.state)
        if execution.outcome.ok:
            self.ledger.commit(execution.state)
        return execution.outcome


#: Characters of a result quoted in feedback.
_QUOTED_RESULT = 120


def _cut(text: str) -> str:
    """``text`` on one line, cut to ``_QUOTED_RESULT`` characters with a marker."""
    line = " ".join(text.split())
    return line if len(line) <= _QUOTED_RESULT else line[:_QUOTED_RESULT] + " [... cut]"
