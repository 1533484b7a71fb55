"""The exact-call check of a tool-call dataset, with feedback per call and per argument.

In the spirit of an AST checker: the calls made must be the expected set of function names
(order ignored unless the example says ``ordered``), each with every expected argument
present, no argument the tool does not have, and every value equal after type normalisation
(``freyr_dspy.evaluation._calls.values_equal``: numbers numerically, text trimmed and
case-folded, so enum spellings compare equal; lists in order, except where the schema says
the items are a set) or among the example's listed alternatives. An argument the example does
not list is accepted only empty or equal to its schema default: a value nobody asked for
changes the call.

Every difference becomes a short sentence ("called get-weather without city", "unit
'kelvin' not in [celsius, c]"): GEPA's reflection model reads them, and so does a user
looking at a failed example.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from freyr_dspy.datasets._format import AnyOf, ExpectedCall
from freyr_dspy.evaluation import values_equal
from freyr_dspy.tools import Toolbox

__all__ = ["CallCheck", "check_calls", "render_call"]

#: A call the program made: (tool name, arguments).
MadeCall = tuple[str, Mapping[str, Any]]

#: Beyond this many calls of one tool, calls are paired in order rather than by best match.
_MAX_PERMUTED = 6


@dataclass(frozen=True)
class CallCheck:
    """How the calls made compare with the expected ones."""

    ok: bool
    #: The calls named exactly the expected tools (as many times each).
    names_ok: bool
    #: ``None`` when ok; else ``extra-call``, ``missed-call``, ``wrong-tool`` or ``arguments``.
    kind: str | None
    problems: tuple[str, ...] = ()

    @property
    def feedback(self) -> str:
        """The problems as one text, or a short confirmation."""
        return "; ".join(self.problems) if self.problems else "the expected calls were made"


def check_calls(
    expected: Sequence[ExpectedCall],
    made: Sequence[MadeCall],
    toolbox: Toolbox,
    *,
    ordered: bool = False,
) -> CallCheck:
    """Compare the calls ``made`` with the ``expected`` ones (see the module docstring)."""
    made = [(_canonical(name, toolbox), arguments) for name, arguments in made]
    missing = Counter(c.name for c in expected) - Counter(name for name, _ in made)
    extra = Counter(name for name, _ in made) - Counter(c.name for c in expected)
    problems = [*_missing_sentences(missing, expected), *_extra_sentences(extra, expected)]
    if ordered and not missing and not extra:
        if [c.name for c in expected] != [name for name, _ in made]:
            problems.append(
                "the calls were made in another order than needed: "
                + " then ".join(c.name for c in expected)
            )
    names_ok = not (missing or extra)
    for want, got in _pairs(expected, made, ordered):
        problems.extend(argument_problems(want, got, toolbox))
    kind = None if not problems else _kind(missing, extra)
    return CallCheck(ok=not problems, names_ok=names_ok, kind=kind, problems=tuple(problems))


def argument_problems(
    want: ExpectedCall, arguments: Mapping[str, Any], toolbox: Toolbox
) -> list[str]:
    """What is wrong with the arguments of one call of the expected tool (empty: nothing)."""
    schema = _properties(toolbox, want.name)
    problems = []
    for name, expected in want.arguments.items():
        if name not in arguments:
            if not (isinstance(expected, AnyOf) and expected.optional):
                problems.append(f"called {want.name} without {name}")
            continue
        got = arguments[name]
        if isinstance(expected, AnyOf):
            if not any(_equal(v, got, schema.get(name)) for v in expected.values):
                shown = ", ".join(_shown(v) for v in expected.values)
                problems.append(f"{want.name}: {name} {_shown(got)} not in [{shown}]")
        elif not _equal(expected, got, schema.get(name)):
            problems.append(f"{want.name}: {name} is {_shown(got)}, expected {_shown(expected)}")
    for name, got in arguments.items():
        if name in want.arguments:
            continue
        if schema and name not in schema:
            problems.append(f"{want.name}: unknown argument {name}")
        elif not _unasked_ok(got, (schema.get(name) or {}).get("default")):
            problems.append(f"{want.name}: {name}={_shown(got)} was not asked for")
    return problems


def _canonical(name: str, toolbox: Toolbox) -> str:
    tool = toolbox.resolve(name)
    return tool.name if tool is not None else name


def _missing_sentences(missing: Counter[str], expected: Sequence[ExpectedCall]) -> list[str]:
    sentences = []
    for name, count in missing.items():
        arguments = next(c.plain_arguments() for c in expected if c.name == name)
        times = f" ({count} more time{'s' if count > 1 else ''})" if count > 1 else ""
        sentences.append(f"did not call {name}{times}, e.g. with {_shown(arguments)}")
    return sentences


def _extra_sentences(extra: Counter[str], expected: Sequence[ExpectedCall]) -> list[str]:
    if not extra:
        return []
    if not expected:
        names = ", ".join(extra)
        return [f"called {names} although no offered tool does what was asked: reply in words"]
    return [
        f"called {name} {count} time{'s' if count > 1 else ''} more than asked"
        if any(c.name == name for c in expected)
        else f"called {name}, which the request did not ask for"
        for name, count in extra.items()
    ]


def _pairs(
    expected: Sequence[ExpectedCall], made: Sequence[MadeCall], ordered: bool
) -> list[tuple[ExpectedCall, Mapping[str, Any]]]:
    """Expected calls paired with made calls of the same tool, best match first."""
    pairs = []
    for name in dict.fromkeys(c.name for c in expected):
        wants = [c for c in expected if c.name == name]
        gots = [arguments for made_name, arguments in made if made_name == name]
        pairs.extend(_best_pairing(wants, gots, ordered))
    return pairs


def _best_pairing(
    wants: list[ExpectedCall], gots: list[Mapping[str, Any]], ordered: bool
) -> list[tuple[ExpectedCall, Mapping[str, Any]]]:
    """Pair calls of one tool so that the fewest arguments differ (in order when ``ordered``)."""
    if ordered or max(len(wants), len(gots)) > _MAX_PERMUTED:
        return list(zip(wants, gots, strict=False))
    schemaless = Toolbox([])

    def cost(pairs: list[tuple[ExpectedCall, Mapping[str, Any]]]) -> int:
        return sum(len(argument_problems(want, got, schemaless)) for want, got in pairs)

    if len(wants) <= len(gots):
        options = [
            [(want, gots[i]) for want, i in zip(wants, order, strict=True)]
            for order in itertools.permutations(range(len(gots)), len(wants))
        ]
    else:
        options = [
            [(wants[i], got) for got, i in zip(gots, order, strict=True)]
            for order in itertools.permutations(range(len(wants)), len(gots))
        ]
    return min(options, key=cost)


def _kind(missing: Counter[str], extra: Counter[str]) -> str:
    if extra and not missing:
        return "extra-call"
    if missing and not extra:
        return "missed-call"
    if missing and extra:
        return "wrong-tool"
    return "arguments"


def _properties(toolbox: Toolbox, name: str) -> dict[str, Any]:
    """The tool's argument schemas, each with the default its function declares.

    A tool built from a function has its defaults in its parameters, not in its JSON schema;
    ``pin_note(note_id, pinned=True)`` written with ``pinned=True`` does what was asked.
    """
    tool = toolbox.resolve(name)
    if tool is None:
        return {}
    properties = dict(tool.json_schema().get("properties") or {})
    for parameter in tool.parameters:
        schema = properties.get(parameter.name)
        if isinstance(schema, Mapping) and "default" not in schema and not parameter.required:
            properties[parameter.name] = {**schema, "default": parameter.default}
    return properties


def _equal(expected: Any, got: Any, schema: Any) -> bool:
    """``values_equal``, with arrays the schema declares unique compared as sets."""
    if isinstance(schema, Mapping) and schema.get("uniqueItems") and _lists(expected, got):
        remaining = list(got)
        for item in expected:
            match = next((g for g in remaining if values_equal(item, g)), _NO_MATCH)
            if match is _NO_MATCH:
                return False
            remaining.remove(match)
        return not remaining
    return values_equal(expected, got)


_NO_MATCH = object()


def _lists(*values: Any) -> bool:
    return all(isinstance(v, list) for v in values)


def _unasked_ok(value: Any, default: Any) -> bool:
    """An argument nobody asked for is harmless when it says nothing or repeats the default."""
    empty = value is None or (isinstance(value, str | list | dict) and not value)
    return empty or (default is not None and values_equal(default, value))


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    return str(value)


def render_call(name: str, arguments: Mapping[str, Any]) -> str:
    """``get-weather(city='Oslo', days=2)``: a call as reports show it."""
    return f"{name}({', '.join(f'{k}={_shown(v)}' for k, v in arguments.items())})"
