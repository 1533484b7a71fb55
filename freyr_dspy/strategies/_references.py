"""A request that takes a value from an earlier call's result.

"Convert 100 USD to EUR, then add a todo titled 'pay' followed by the converted amount": the
todo's title is stated in part ("pay") and in part is what the conversion returns. Checked
only for what the request says is missing, the todo call looks complete and is made at once,
titled "pay". Two checks read the request instead:

* ``refers_back``: after its first clause, the request points back at what an earlier call
  gave - a determiner and a result word ("the converted amount", "the result", "that total",
  "el resultado"), or a determiner and a word of the earlier tool's name ("the forecast" after
  ``get_forecast``). A call after that one then waits for its result (``Freyr`` in a run that
  executes the tools, ``freyr_dspy.strategies._answering.deferred`` when the caller executes
  them).
* ``misses_result``: the call was written with the result in view, yet none of its values
  carries anything the result says that the request did not (a number, a word, an id): the
  model dropped the part it had to take from the result. The call is refused once
  (``ToolExecutor.refusal``) and written again; written the same way again, it stands.

Both lean towards waiting: a call that waits needlessly costs one more round, one that does
not wait makes the call with a value missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from freyr_dspy.schemas import CallRecord
from freyr_dspy.tools import Tool, recorded_outcome

__all__ = ["copied_calls", "gave_result", "misses_result", "refers_back", "result_words"]

#: Words that point at something already named ("the", "that", ...), in six languages.
_DETERMINERS = (
    "the|that|this|those|these|its|their|"
    "el|la|los|las|ese|esa|esos|esas|dicho|dicha|"
    "le|les|ce|cette|ces|"
    "das|den|die|der|dem|dieses|diesen|"
    "il|lo|gli|quel|quella|"
    "os|esse|essa"
)
#: Nouns that name what a call gives back.
_RESULT_NOUNS = (
    "results?|answers?|outputs?|outcomes?|totals?|amounts?|sums?|"
    "resultados?|respuesta|cantidad|importe|suma|"
    "r[ée]sultats?|r[ée]ponse|montant|somme|"
    "ergebnis(?:se)?|antwort|betrag|summe|"
    "risultat[oi]|importo|somma|"
    "quantia"
)
#: Where the first clause of a request ends: punctuation or a word that joins two asks.
_CLAUSE_END = re.compile(
    r"[,;:.!?]|\b(?:then|and|after that|afterwards|y|luego|despu[ée]s|et|puis|ensuite|und|"
    r"dann|danach|poi|depois)\b",
    re.IGNORECASE,
)
#: Words of a tool's name too common to point at its result ("the list", "the search").
_GENERIC = frozenset(
    """get set list add create update delete remove find search fetch show make send check look
    lookup query read write run do new item items data info by for to of from all one""".split()
)
#: Shortest word of a tool's name that can point back at its result.
_SHORTEST_STEM = 4
_TOKEN = re.compile(r"-?\d+(?:[.,]\d+)*|[^\W\d_]+(?:[-_]?\w+)*", re.UNICODE)
#: Shortest word of a result that counts as something it says (ids and numbers count whole).
_SHORTEST_WORD = 3


def refers_back(message: str, earlier: Tool) -> bool:
    """Whether ``message``, after its first clause, points at what ``earlier`` returned."""
    end = _CLAUSE_END.search(message)
    if end is None:
        return False
    pointed = _pointing(earlier)
    return pointed.search(message, end.end()) is not None


def _pointing(tool: Tool) -> re.Pattern[str]:
    """A determiner, maybe one word, then a result noun or a stem of the tool's name."""
    stems = [re.escape(stem) + r"\w*" for stem in _name_stems(tool.name)]
    heads = "|".join([_RESULT_NOUNS, *stems])
    return re.compile(
        rf"\b(?:{_DETERMINERS})\s+(?:[^\W\d_]+\s+)?(?:{heads})\b", re.IGNORECASE | re.UNICODE
    )


def _name_stems(name: str) -> list[str]:
    """The words of a tool's name that can point at its result, without a closing ``e``.

    ``convert_currency`` -> ``convert``, ``currency``; ``calculate_tip`` -> ``calculat``
    (which "the calculated tip" and "the calculation" both start with).
    """
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    words = [w.lower() for w in re.split(r"[\W_]+", spaced) if w]
    kept = [w for w in words if w not in _GENERIC and len(w) >= _SHORTEST_STEM]
    return [w[:-1] if w.endswith("e") and len(w) > _SHORTEST_STEM else w for w in kept]


#: A call as the roles see it, maybe with what follows it in a tool turn: ``f(x='a') returned``.
_CALL_TEXT = re.compile(r"\s*([\w.\-]+)\(.*\)(?:\s+returned\b.*)?\s*", re.DOTALL)


def copied_calls(arguments: dict[str, Any], tools: Iterable[str]) -> list[str]:
    """The arguments whose value is the text of a call of one of ``tools``, not a value."""
    names = set(tools)
    copied = []
    for name, value in arguments.items():
        match = _CALL_TEXT.fullmatch(value) if isinstance(value, str) else None
        if match is not None and match.group(1) in names:
            copied.append(name)
    return copied


def gave_result(call: CallRecord) -> bool:
    """Whether ``call`` ran and returned a result (not an error, not only recorded)."""
    return call.outcome.ok and call.outcome != recorded_outcome(call.tool)


def result_words(result: str, message: str) -> set[str]:
    """What ``result`` says that ``message`` does not: its numbers, ids and words, folded."""
    return _tokens([result]) - _tokens([message])


def misses_result(arguments: dict[str, Any], result: str, message: str) -> bool:
    """Whether no value of ``arguments`` carries anything ``result`` adds to ``message``.

    False when the result adds nothing (a result that only repeats the request cannot be
    missed).
    """
    new = result_words(result, message)
    if not new:
        return False
    return not (_tokens(_leaves(arguments)) & new)


def _leaves(value: Any) -> Iterable[str]:
    """Every value inside ``value`` as text (booleans and empty values left out)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield str(value)


def _tokens(texts: Iterable[str]) -> set[str]:
    """Numbers (as a number: "92.50" and "92.5" are one) and words of three letters or more."""
    found: set[str] = set()
    for text in texts:
        for token in _TOKEN.findall(text):
            number = _number(token)
            if number is not None:
                found.add(number)
            elif len(token) >= _SHORTEST_WORD:
                found.add(token.casefold())
    return found


def _number(token: str) -> str | None:
    try:
        return repr(float(token.replace(",", "")))
    except ValueError:
        return None
