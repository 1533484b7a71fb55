"""Grounded optional arguments: a value nobody stated is not passed for an optional parameter.

Small models fill every parameter they see. For a required one that is the job; for an optional
one it invents a value the user never gave (``"limit": 5``, a memo, a calendar location) where
the tool's own default was meant. ``ground_arguments`` drops an optional argument unless its
value is *grounded*: stated in the evidence (the message, the conversation, the state, the
outcomes of earlier calls) or equal to the tool's declared default.

What counts as stated, per value:

* text - the words of the value appear together in the evidence, case-folded, with punctuation
  and ``_``/``-`` read as spaces (``"dining_out"`` is grounded by "dining out"); a one-word
  value of three letters or more may abbreviate a word (``"mon"`` by "Monday");
* a number - the evidence writes that number (``63.4`` by "63.40", ``1200`` by "1,200") or a
  small number word ("two"), or a duration in another unit of time (``minutes=90`` by "an
  hour and a half", ``120`` by "two hours", ``30`` by "half an hour");
* a list or an object - every item and value in it is grounded;
* a boolean or an empty value - always kept: a flag cannot be quoted, and an empty value states
  nothing the tool would act on;
* a text that says there is no value (``"None"``, ``"null"``, ``"N/A"``) - never, unless the
  parameter's enum lists it: it means "not given". (The roles are shown "(none)" for an empty
  conversation, which would otherwise ground it: Qwen 0.5B wrote ``location: "None"``.)

Required arguments, and names the tool does not declare, are left alone: validation reports
those, and the error goes back to the model as feedback.

The words are read as English (with number words of five more languages). A request in another
language states its values in words the evidence cannot match ("tres personas con piscina" for
``guests=3, amenities=["pool"]``): dropping them would answer other languages worse, so a
request that does not read as English (``Evidence.english``) keeps its optional values.

``copied_examples`` catches the other way small models fill a parameter: they copy the example
a tool's description gives (``"Event title, e.g. 'Weekly sync'"``) instead of the value the user
wrote. A value equal to one of the tool's examples, and stated nowhere in the evidence, is
refused before the tool runs (``Run.execute``), and the refusal goes back as feedback like a
validation error. Examples are the quoted values after "e.g.", "for example", "such as" or
"like" in the tool's and its parameters' descriptions, and the JSON schema's ``examples``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from freyr_dspy.tools import Tool, map_subschemas, subschemas

__all__ = [
    "IDENTIFIER",
    "Evidence",
    "copied_examples",
    "differs_by_stated_values",
    "echoed_error",
    "example_clauses",
    "example_values",
    "examples_of",
    "ground_arguments",
    "reads_english",
    "tool_without_examples",
    "unstated_required",
    "unsupported_numbers",
    "without_examples",
]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?")
_NOT_WORD = re.compile(r"[\W_]+")
#: Shortest one-word value read as an abbreviation of a longer evidence word.
_ABBREVIATION = 3
#: Fewest words a value needs to be read as a copy of an error message: the values an error
#: lists for the model to choose from ("one of: Hall, Cellar") are shorter.
_ECHO_WORDS = 4
#: ISO dates, times and date-times, which a model derives from "2 May" or "half past nine".
_DATE_OR_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}([T ]\d{1,2}:\d{2}(:\d{2})?\S*)?|\d{1,2}:\d{2}(:\d{2})?"
)
#: An id: one token of letters and digits, maybe joined by ``-``, ``_`` or ``.`` (``SKU-502``).
IDENTIFIER = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*")
#: A quoted value: 'Lisbon', "ops", `v1.2`, “Lisbon”, ‘Lisbon’.
_QUOTED_VALUE = r"(?:'[^']+'|\"[^\"]+\"|`[^`]+`|“[^”]+”|‘[^’]+’)"
#: "e.g. 'Lisbon'", "for example 'a', 'b' or 'c'", "such as `v1.2`": examples are quoted values.
_EXAMPLE_CLAUSE = re.compile(
    r"(?:\be\.\s?g\.?|\bfor (?:example|instance)|\bsuch as|\blike)[,:]?\s*"
    rf"({_QUOTED_VALUE}(?:\s*(?:,|/|\bor\b|\band\b)\s*{_QUOTED_VALUE})*)",
    re.IGNORECASE,
)
_QUOTED = re.compile(_QUOTED_VALUE)
#: The JSON Schema keywords that list examples (``example`` is OpenAPI's).
_EXAMPLE_KEYWORDS = ("examples", "example")
#: An example clause with the punctuation that joins it to its sentence, for removal.
_EXAMPLE_REMOVAL = re.compile(r"[,;]?\s*\(?" + _EXAMPLE_CLAUSE.pattern + r"\)?", re.IGNORECASE)
#: Texts (as ``_words``) a model writes for "no value".
_NO_VALUE = frozenset({" none ", " null ", " nil ", " n a ", " undefined "})
_NUMBER_WORDS = {
    word: float(value)
    for words in (
        "zero one two three four five six seven eight nine ten eleven twelve",
        "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce",
        "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
        "zéro un deux trois quatre cinq six sept huit neuf dix onze douze",
        "zero uno due tre quattro cinque sei sette otto nove dieci undici dodici",
        "zero um dois três quatro cinco seis sete oito nove dez onze doze",
    )
    for value, word in enumerate(words.split())
}
#: Common English words: a request using none of them reads as another language.
_ENGLISH = frozenset(
    """the a an to of in on for and or is are was my me i you your it at with from what how
    please can could would will set get show find book add send is do does this that next
    today tomorrow all any some by as be up out""".split()
)
#: Share of a request's words that are common English words, at least, for it to read as English.
_ENGLISH_SHARE = 1 / 8
#: Units of time in seconds, as words follow an amount ("2 hours", "ten minutes").
_TIME_UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600,
               "day": 86400, "week": 604800}  # fmt: skip
_AMOUNT = (
    r"(\d+(?:\.\d+)?|an?|half an?|one and a half|"
    + "|".join(
        sorted((w for w in _NUMBER_WORDS if w.isascii() and len(w) > 2), key=len, reverse=True)
    )
    + ")"
)
#: An amount of time: "2 hours", "an hour and a half", "half an hour", "ninety minutes".
_DURATION = re.compile(
    rf"\b{_AMOUNT}\s+({'|'.join(_TIME_UNITS)})s?\b(\s+and\s+a\s+half)?", re.IGNORECASE
)


@dataclass(frozen=True)
class Evidence:
    """The text arguments may be taken from, prepared once per call."""

    words: str
    numbers: frozenset[float]
    #: Whether the request (the first text) reads as English: its words can ground values.
    english: bool = True

    @classmethod
    def of(cls, *texts: str) -> Evidence:
        """Evidence from the given texts (message, conversation, state, outcomes)."""
        text = "\n".join(texts)
        numbers = {float(match.replace(",", "")) for match in _NUMBER.findall(text)}
        words = _words(text)
        numbers |= {value for word, value in _NUMBER_WORDS.items() if f" {word} " in words}
        numbers |= durations(text)
        return cls(words=words, numbers=frozenset(numbers), english=reads_english(texts[:1]))

    def states(self, value: Any) -> bool:
        """True when ``value`` is grounded in this evidence (see the module docstring)."""
        if isinstance(value, bool) or value is None:
            return True
        if isinstance(value, int | float):
            return any(math.isclose(float(value), n, rel_tol=1e-9) for n in self.numbers)
        if isinstance(value, str):
            return not value.strip() or self._states_text(value)
        if isinstance(value, Mapping):
            return all(self.states(item) for item in value.values())
        if isinstance(value, list | tuple):
            return all(self.states(item) for item in value)
        return True

    def _states_text(self, value: str) -> bool:
        words = _words(value)
        if words.strip() and words in self.words:
            return True
        word = words.strip()
        if len(word) >= _ABBREVIATION and word.isalpha() and f" {word}" in self.words:
            return True
        # "21" written as text is still a number the user may have stated as "21.0".
        try:
            return self.states(float(value.replace(",", "")))
        except ValueError:
            return False


def durations(text: str) -> set[float]:
    """Each amount of time ``text`` states, in every unit of time ("2 hours": 7200, 120, 2...)."""
    found: set[float] = set()
    for amount, unit, half in _DURATION.findall(text):
        seconds = _amount(amount) * _TIME_UNITS[unit.lower()]
        seconds += _TIME_UNITS[unit.lower()] / 2 if half else 0
        found |= {seconds / size for size in set(_TIME_UNITS.values()) if seconds >= size / 2}
    return found


def _amount(text: str) -> float:
    text = text.lower()
    if text in ("a", "an"):
        return 1.0
    if text.startswith("half"):
        return 0.5
    if text == "one and a half":
        return 1.5
    return _NUMBER_WORDS[text] if text in _NUMBER_WORDS else float(text)


def reads_english(texts: tuple[str, ...]) -> bool:
    """Whether ``texts`` read as English: short texts do, others by their common words."""
    words = _words(" ".join(texts)).split()
    if len(words) <= 3:
        return True
    return sum(word in _ENGLISH for word in words) >= _ENGLISH_SHARE * len(words)


def unsupported_numbers(text: str, evidence: Evidence) -> list[str]:
    """The numbers ``text`` writes that the evidence does not, in order, each once.

    What a reply invents when it reports a result no tool returned is mostly a number: a
    temperature, an amount, a count. Numbers are compared by value (``2.0`` by "2").
    """
    found: list[str] = []
    for match in _NUMBER.findall(text):
        value = float(match.replace(",", ""))
        stated = any(math.isclose(value, n, rel_tol=1e-9) for n in evidence.numbers)
        if not stated and match not in found:
            found.append(match)
    return found


def ground_arguments(
    tool: Tool, arguments: Mapping[str, Any], evidence: Evidence
) -> tuple[dict[str, Any], list[str]]:
    """Return ``arguments`` without ungrounded optional values, and the names dropped.

    A request not in English keeps them all (see the module docstring).
    """
    if not evidence.english:
        return dict(arguments), []
    optional = {p.name: p for p in tool.parameters if not p.required}
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for name, value in arguments.items():
        parameter = optional.get(name)
        if parameter is None or value == parameter.default:
            kept[name] = value
        elif not _says_no_value(value, parameter.enum) and evidence.states(value):
            kept[name] = value
        else:
            dropped.append(name)
    return kept, dropped


def unstated_required(tool: Tool, arguments: Mapping[str, Any], evidence: Evidence) -> list[str]:
    """The required text arguments whose values share no word with the evidence.

    A model asked to call a tool for a request it does not fit fills the required parameters
    anyway, with values nobody gave: ``participants: ["participant1@example.com"]`` for "what
    meetings do I have on Thursday", ``origin: "LAX"`` for "is flight BA 2490 on time". Such a
    value names nothing the user said. The test is lenient, as a value the model rightly
    derived usually keeps a word of the request (``America/Chicago`` from "Chicago time"):
    a text is unstated when none of its words of three characters or more (or numbers) is in
    the evidence. An id (letters and digits in one token: ``SKU-502``, ``note-13``) is stated
    only whole. Enums, numbers, booleans and dates or times (``2026-05-02`` from "2 May
    2026") are derived, not quoted, and are never counted.
    """
    unstated = []
    for parameter in tool.parameters:
        if not parameter.required or parameter.enum or parameter.name not in arguments:
            continue
        if any(not _shares_a_word(text, evidence) for text in _texts(arguments[parameter.name])):
            unstated.append(parameter.name)
    return unstated


#: What lists several values for one thing: a conjunction or a word of quantity (English,
#: Spanish, German, French, Italian, Portuguese), or a list separator between words.
_LISTING = re.compile(
    r"\b(?:and|or|both|each|every|versus|vs|compare|between|y|o|ambos|cada|und|oder|beide|"
    r"jede[nrs]?|et|ou|chaque|les deux|e|entrambi|ogni)\b|\w\s*[,;&/]\s*\w",
    re.IGNORECASE,
)


def lists_values(message: str) -> bool:
    """Whether ``message`` may list several values for one thing ("Oslo and Paris", "a, b").

    Cheap and loose on purpose: it only lets a planned tool be written as several calls,
    and a call beyond those planned is still kept only when it differs from the others in
    values the request states (``differs_by_stated_values``).
    """
    return _LISTING.search(message) is not None


def differs_by_stated_values(
    call: Mapping[str, Any], others: list[dict[str, Any]], evidence: Evidence
) -> bool:
    """True when ``call`` differs from each of ``others`` only in values the evidence states.

    A model allowed to write several calls of a tool for a request that asks for one
    (``split_calls``) adds variants nobody asked for: ``replicas: 0`` beside the ``3`` asked,
    the same search again with ``limit: 10``, the garden's sensor and then the kitchen's.
    A call asked for differs from the others in something the user said ("in Oslo and in
    Paris"). So against every other call, ``call`` must differ in at least one value, and
    every value it differs in must be stated (dates and times count as stated: they are
    derived from "Monday"). A flag, an empty value or a parameter left out is no
    difference either way: a flag cannot be quoted, and leaving a value out asks for nothing.
    Nor is a swap: the same values in other parameters (``EUR -> USD`` beside ``USD -> EUR``
    for "Convert 100 USD to EUR", which the 1.5B wrote) unless the request says a swapped
    value more than once ("from Oslo to Paris and from Paris to Oslo").
    """
    return all(
        _stated_difference(call, other, evidence) and not _swapped(call, other, evidence)
        for other in others
    )


def _swapped(call: Mapping[str, Any], other: Mapping[str, Any], evidence: Evidence) -> bool:
    """Whether ``call`` holds ``other``'s values in other parameters, each said only once."""
    mine, theirs = _value_keys(call), _value_keys(other)
    if mine != theirs or dict(call) == dict(other):
        return False
    moved = [v for name, v in call.items() if isinstance(v, str) and other.get(name) != v]
    return bool(moved) and all(evidence.words.count(f" {_words(v).strip()} ") <= 1 for v in moved)


def _value_keys(call: Mapping[str, Any]) -> list[str]:
    return sorted(repr(v) for v in call.values() if not _no_difference(v))


def _stated_difference(
    call: Mapping[str, Any], other: Mapping[str, Any], evidence: Evidence
) -> bool:
    differing = [
        value
        for name, value in call.items()
        if (name not in other or other[name] != value) and not _no_difference(value)
    ]
    return bool(differing) and all(_stated_or_derived(value, evidence) for value in differing)


def _no_difference(value: Any) -> bool:
    return isinstance(value, bool) or value is None or value in ("", [], {})


def _stated_or_derived(value: Any, evidence: Evidence) -> bool:
    if isinstance(value, str) and _DATE_OR_TIME.fullmatch(value.strip()):
        return True
    return evidence.states(value)


def _shares_a_word(text: str, evidence: Evidence) -> bool:
    if not text.strip() or _DATE_OR_TIME.fullmatch(text.strip()):
        return True
    if IDENTIFIER.fullmatch(text.strip()):
        # An id is stated whole or not at all: "SKU-502" shares "sku" with a cart listing
        # "SKU-501", which states nothing about 502. Separators may differ ("BA 2490").
        return _id_pattern(text).search(evidence.words) is not None
    words = [w for w in _words(text).split() if len(w) >= _ABBREVIATION or w.isdigit()]
    # A longer word may begin one of the request's ("India" in "Indian").
    return not words or any(
        f" {word}{'' if len(word) > _ABBREVIATION else ' '}" in evidence.words for word in words
    )


def _id_pattern(text: str) -> re.Pattern[str]:
    """The id's runs of letters and of digits, in order, apart or together, whole."""
    runs = re.findall(r"[a-z]+|\d+", _words(text))
    return re.compile(r"(?<![a-z0-9])" + r"\s?".join(runs) + r"(?![a-z0-9])")


def _says_no_value(value: Any, enum: tuple[Any, ...]) -> bool:
    """Whether ``value`` is a text for "no value" ("None", "N/A") the enum does not offer."""
    return isinstance(value, str) and _words(value) in _NO_VALUE and value not in enum


def _words(text: str) -> str:
    """Text as words: case-folded, punctuation as single spaces, padded for whole-word search."""
    return f" {_NOT_WORD.sub(' ', text.casefold()).strip()} "


def example_clauses(text: str) -> list[str]:
    """The example values a description gives ("e.g. 'Lisbon'" -> ``Lisbon``), in order."""
    return [
        quoted[1:-1]
        for clause in _EXAMPLE_CLAUSE.findall(text)
        for quoted in _QUOTED.findall(clause)
    ]


def examples_of(tool: Tool) -> frozenset[str]:
    """The example values a tool's descriptions and JSON schema give, as words (see above)."""
    texts = [tool.description, *(p.description for p in tool.parameters)]
    found = [value for text in texts for value in example_clauses(text)]
    found += [str(value) for value in _schema_examples(tool.schema)]
    for parameter in tool.parameters:
        found += [str(value) for value in _schema_examples(parameter.schema)]
    return frozenset(words for words in map(_words, found) if words.strip())


def without_examples(text: str) -> str:
    """``text`` without its example clauses: "Event title, e.g. 'Weekly sync'" -> "Event title".

    The parameters role is shown this after it copied an example, so it cannot copy it again.
    """
    return _EXAMPLE_REMOVAL.sub("", text)


def tool_without_examples(tool: Tool) -> Tool:
    """``tool`` as the model sees it with no examples: descriptions and JSON schema cleaned."""
    parameters = tuple(
        replace(p, description=without_examples(p.description), schema=_clean_schema(p.schema))
        for p in tool.parameters
    )
    return replace(
        tool,
        description=without_examples(tool.description),
        parameters=parameters,
        schema=_clean_schema(tool.schema),
    )


def _clean_schema(schema: Any) -> Any:
    """``schema`` without its ``examples`` and with example clauses cut from descriptions."""
    if not isinstance(schema, Mapping):
        return schema
    node = {key: value for key, value in schema.items() if key not in _EXAMPLE_KEYWORDS}
    if isinstance(node.get("description"), str):
        node["description"] = without_examples(node["description"])
    return map_subschemas(node, _clean_schema)


def example_values(examples: frozenset[str], arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(argument, value)`` pairs whose text value is one of ``examples`` (``examples_of``).

    Nested values count (an attendee's copied e-mail address); the argument named is the
    top-level one.
    """
    return [
        (name, text)
        for name, value in arguments.items()
        for text in _texts(value)
        if _words(text) in examples
    ]


def copied_examples(
    examples: frozenset[str], arguments: Mapping[str, Any], evidence: Evidence
) -> list[tuple[str, str]]:
    """The ``example_values`` of ``arguments`` that nobody stated: copies, not the user's words.

    A value the user (or the state) did say is never a copy.
    """
    return [
        (name, text)
        for name, text in example_values(examples, arguments)
        if not evidence.states(text)
    ]


def echoed_error(arguments: Mapping[str, Any], error: str, evidence: Evidence) -> list[str]:
    """The arguments whose text repeats ``error`` (the last attempt's) and nothing anyone said.

    Refused and asked again, a small model may write the refusal itself as the value: Qwen
    1.5B paid a bill to ``"Copied from the example in the description of pay_bill, not a value
    the user gave"``. A text of four words or more that the error says, word for word, and the
    evidence does not, is such an echo. Shorter values are left alone: an error that lists the
    valid values ("one of: Hall, Cellar") is there to be copied from.
    """
    said = Evidence.of(error)
    return list(
        dict.fromkeys(
            name
            for name, value in arguments.items()
            for text in _texts(value)
            if len(_words(text).split()) >= _ECHO_WORDS
            and said.states(text)
            and not evidence.states(text)
        )
    )


def _schema_examples(schema: Any) -> list[Any]:
    """The ``examples``/``example`` values anywhere in a JSON schema (scalars only)."""
    if not isinstance(schema, Mapping):
        return []
    listed = schema.get("examples")
    own = list(listed) if isinstance(listed, list) else []
    if "example" in schema:
        own.append(schema["example"])
    nested = [value for sub in subschemas(schema) for value in _schema_examples(sub)]
    return [v for v in own if isinstance(v, str | int | float)] + nested


def _texts(value: Any) -> list[str]:
    """The text values in ``value`` (itself, or inside lists and objects)."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _texts(item)]
    return []
