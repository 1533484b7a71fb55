"""Reply rows: tools that return the row's results, and the check that the reply invents none.

A row with ``results`` (``freyr_dspy.datasets._format``) is asked with a toolbox whose tools
answer from those results instead of recording their calls, so the program writes its reply
as it would after real tool calls. The reply is then checked for invented results: every
number it states must be written in the request (message, conversation, state) or in a result
a call got back. A reply that says "100 USD is 1400 EUR" when no tool converted anything fails.

The check reads numbers only: they are what a model makes up when it reports a result it does
not have (a temperature, an amount, a count), and they can be checked without a judge model.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from freyr_dspy.datasets._format import AnyOf, ToolResult
from freyr_dspy.errors import ToolError
from freyr_dspy.evaluation import values_equal
from freyr_dspy.tools import Tool, Toolbox

__all__ = ["invented_numbers", "numbers_in", "replaying_toolbox"]

#: A number as replies write it: ``2``, ``-3.5``, ``1,400``, ``12.50``.
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")


def replaying_toolbox(toolbox: Toolbox, results: Sequence[ToolResult]) -> Toolbox:
    """``toolbox`` (spec-only) whose tools named in ``results`` return them when called.

    A call gets the content of the first result of its tool whose listed arguments it matches
    (a result listing none matches any call); a call no result matches fails with an error
    that says so, as a real tool would for arguments it cannot serve. Tools without results
    record their calls as spec-only tools do.
    """
    by_tool: dict[str, list[ToolResult]] = {}
    for result in results:
        by_tool.setdefault(result.name, []).append(result)
    tools = [
        _replaying(tool, by_tool[tool.name]) if tool.name in by_tool else tool
        for tool in toolbox.spec_only()
    ]
    return Toolbox(tools, toolbox.library_descriptions)


def _replaying(tool: Tool, results: list[ToolResult]) -> Tool:
    def answer(**arguments: Any) -> str:
        for result in results:
            if _matches(result.arguments, arguments):
                if not result.ok:
                    raise ToolError(result.content)
                return result.content
        raise ToolError(f"{tool.name} has no result for these arguments")

    return dataclasses.replace(tool, func=answer, takes_state=False)


def _matches(listed: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether a call's arguments hold every value a result lists (alternatives allowed)."""
    for name, want in listed.items():
        got = arguments.get(name)
        options = want.values if isinstance(want, AnyOf) else [want]
        if not any(values_equal(option, got) for option in options):
            return False
    return True


def numbers_in(text: str) -> set[str]:
    """The numbers written in ``text``, normalised (``1,400.0`` -> ``1400``)."""
    return {_normal(match) for match in _NUMBER.findall(text or "")}


def invented_numbers(reply: str, sources: Iterable[str]) -> list[str]:
    """The numbers ``reply`` states that none of ``sources`` writes, in reply order."""
    known: set[str] = set()
    for source in sources:
        known |= numbers_in(source)
    seen: list[str] = []
    for match in _NUMBER.findall(reply or ""):
        number = _normal(match)
        if number not in known and number not in seen:
            seen.append(number)
    return seen


def _normal(number: str) -> str:
    value = float(number.replace(",", ""))
    return str(int(value)) if value.is_integer() else repr(value)
