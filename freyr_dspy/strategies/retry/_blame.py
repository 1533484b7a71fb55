"""Blame: which arguments a tool's error text complains about, and what it offers instead.

A small model retried with the error as feedback mostly writes the same arguments again. On
LLMaker with Qwen2.5-Coder 0.5B, 17 of FREYR's 27 failing calls failed with the identical error
on all four attempts; the commonest, ``room_from should be provided (it is empty)``, came back
151 times. The tools are deterministic, so an attempt that repeats the value an error blamed
is wasted.

An argument is *blamed* when the error names its parameter as a word, or its plural
(``room_from should be provided``, ``free directions of Hall: north, east``), or, when it
names none, quotes the value the model wrote (``there is no enemy named 'Gobbo'``).
``RetryLimits`` keeps what the next attempts may not write again; the parameters' schema is
then narrowed so that the llama.cpp grammar cannot write it (``prompting.narrowing``).
Numbers, booleans and texts holding quotes or backslashes cannot be excluded that way;
``blame_note`` asks for a different value in the feedback, without repeating the value, since
a small model copies values from its feedback.

Excluding a value does not tell the model what to write instead, and a grammar that only says
no pushes it off the value at its last character: the 1.5B, refused ``'Enemy Bats Swarm'``,
wrote ``'Enemy Bats Swarm (Alternative)'``, where the error listed ``enemies there: Bats
Swarm``. Errors often list the values that would do (``rooms: Hall, Cellar``). With
``listed_choices`` a blamed argument whose error lists values of its kind - the list's label
names a word of the parameter (``rooms`` for ``room_to_name``) - is offered exactly those
(``narrowing.choose_from``), an enum the grammar enforces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from freyr_dspy.prompting import offered_choices

__all__ = [
    "RetryLimits",
    "blame_note",
    "blamed_arguments",
    "listed_choices",
    "listed_correction",
]


def blamed_arguments(arguments: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The arguments ``error`` blames: its parameters named as words, else its texts quoted.

    A named parameter is the error's subject, and a value quoted beside it is context:
    ``cell_index must be between 1 and 2 for corridor 'Hall-Cellar'`` blames ``cell_index``,
    not the corridor the model named rightly (blaming it pushed the 1.5B off a right value).

    >>> blamed_arguments({"room_from": "", "name": "Hall"}, "room_from should be provided")
    {'room_from': ''}
    >>> blamed_arguments({"enemy": "Gobbo", "room": "Hall"}, "no enemy named 'Gobbo' in Hall")
    {'enemy': 'Gobbo'}
    """
    named = {name: value for name, value in arguments.items() if _names_parameter(error, name)}
    if named:
        return named
    return {name: value for name, value in arguments.items() if _quotes_value(error, value)}


def blame_note(
    blamed: Mapping[str, Any], choices: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The feedback line asking for other values of the blamed parameters ('' if none).

    A blamed parameter with ``choices`` is asked to take one of them instead.
    """
    if not blamed:
        return ""
    names = ", ".join(blamed)
    note = f"The error is about {names}: write a different value for {names}, not the same one."
    for name in blamed:
        if choices and choices.get(name):
            note += f" {name} is one of: {', '.join(choices[name])}."
    return note


def listed_choices(error: str, parameter: str, written: Any = None) -> list[str]:
    """The values ``error`` lists for ``parameter``: a ``label: a, b, c`` list naming its kind.

    The parameter's kind is the last word of its name that is not a word every parameter has
    (``name``, ``from``, ``id``...): ``room`` for ``room_to_name`` and ``target_room``. A
    list is for the parameter when its label (up to three words before the colon) holds
    that noun, singular or plural: ``rooms: ...`` is a list for ``room_to_name``, not for
    ``corridor_name``. The noun the error puts before the quoted ``written`` value is a kind
    too (``no enemy named 'Bo'``: ``enemy``, for a ``reference_name`` that has none of its
    own). Of several such lists the last is taken (an error ends with the
    options). Quoted items are taken as quoted (``choose from 'Hall', 'Cellar'``); others
    are split on commas and ``or``/``and``. A list with an item that reads as an explanation
    (``invalid date: must be YYYY-MM-DD``) offers nothing, and so does ``none``.

    >>> listed_choices("room_to_name 'Hal' is not a room; rooms: Hall, Cellar.", "room_to_name")
    ['Hall', 'Cellar']
    >>> listed_choices("no corridor 'Hall'; corridors: Hall-Cellar.", "room_to_name")
    []
    """
    kinds = {kind for kind in (_kind(parameter), _noun_before(error, written)) if kind}
    lists = [
        match["items"]
        for match in _LABELLED_LIST.finditer(error)
        if any(_same_noun(kind, word) for kind in kinds for word in _words(match["label"]))
    ]
    return _items(lists[-1]) if lists else []


def listed_correction(arguments: Mapping[str, Any], error: str) -> dict[str, Any] | None:
    """``arguments`` with each blamed text replaced by the one listed value it names; or None.

    "lock failed: no door patio door; doors: front, patio": the model wrote the door as the
    user said it, and the error lists the names the tool takes. A listed value whose words are
    all among the written value's, or the other way round, and no other listed value's, is
    what was meant: the retry takes it without asking the model again (the 1.5B wrote
    ``patio door`` on every retry). None when no blamed value has exactly one such match.
    """
    corrected = dict(arguments)
    for name, value in blamed_arguments(arguments, error).items():
        if not isinstance(value, str) or not value.strip():
            continue
        written = set(_tokens(value))
        matches = [
            choice
            for choice in listed_choices(error, name, value)
            if (said := set(_tokens(choice))) and (said <= written or written <= said)
        ]
        if len(matches) == 1 and matches[0] != value:
            corrected[name] = matches[0]
    return corrected if corrected != dict(arguments) else None


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


@dataclass
class RetryLimits:
    """What the next attempts at one call may not write again, and what they must choose from.

    ``forbidden``: parameter -> the values errors blamed (``forbid_values``), kept with
    ``exclude_blamed``. ``choices``: parameter -> the values the last error listing them
    offers, less those refused (``choose_from``), kept with ``choose_listed``. A later error
    that lists nothing keeps the earlier list (the tool failed, so the state it described
    has not changed), less the value blamed now.
    """

    exclude_blamed: bool = False
    choose_listed: bool = False
    forbidden: dict[str, list[Any]] = field(default_factory=dict)
    choices: dict[str, list[str]] = field(default_factory=dict)

    def record(self, error: str, blamed: Mapping[str, Any], properties: Mapping[str, Any]) -> None:
        """Narrow the next attempts after ``error``, which blamed the arguments ``blamed``.

        ``properties`` are the tool's parameter schemas, ``$ref``s inlined.
        """
        for name, value in blamed.items():
            if self.exclude_blamed:
                self.forbidden.setdefault(name, []).append(value)
            if self.choose_listed:
                listed = listed_choices(error, name, value) or self.choices.get(name, [])
                refused = [value, *self.forbidden.get(name, [])]
                self.choices[name] = offered_choices(properties.get(name), listed, refused)
                if not self.choices[name]:
                    del self.choices[name]


#: ``label: item, item, item`` - the label up to five plain words or numbers (``free
#: directions of Room 2``; not a tool's ``snake_case`` name before ``failed:``), the items up to
#: ``;``, a newline, or a full stop that ends the sentence (``Room 3.0`` is one item).
_LABELLED_LIST = re.compile(
    r"(?P<label>\b[A-Za-z]+(?: [A-Za-z0-9]+){0,4}):[ \t]+"
    r"(?P<items>[^;\n]+?)[ \t]*(?=;|\n|\.(?:\s|$)|$)"
)
#: Words of a parameter's name that say nothing of which values it takes.
_GENERIC_WORDS = frozenset(
    {"name", "id", "key", "value", "type", "from", "to", "new", "old", "ref", "reference", "the"}
)
#: An item that says the list is empty.
_NO_ITEMS = frozenset({"none", "nothing", "no", "empty", "n/a", "-"})
#: Words that make an item an explanation rather than a value.
_EXPLAINING_WORDS = frozenset(
    {"is", "are", "was", "be", "must", "should", "cannot", "not", "expected", "invalid"}
)
_QUOTED_ITEM = re.compile(r"'([^']*)'|\"([^\"]*)\"|`([^`]*)`")


def _kind(parameter: str) -> str | None:
    nouns = [word for word in _words(parameter) if word not in _GENERIC_WORDS]
    return nouns[-1] if nouns else None


#: Words between a kind and its quoted value: "no enemy named 'Bo'", "the room called 'X'".
_LINKING_WORDS = frozenset({"named", "called", "titled", "a", "an", "the", "no", "any"})


def _noun_before(error: str, written: Any) -> str | None:
    """The noun an error puts before the quoted ``written`` value, if it quotes it."""
    if not isinstance(written, str) or not written.strip():
        return None
    for open_, close in _QUOTES:
        at = error.find(f"{open_}{written}{close}")
        if at >= 0:
            before = _words(error[:at])[-3:]
            nouns = [w for w in before if w not in _LINKING_WORDS | _GENERIC_WORDS]
            return nouns[-1] if nouns else None
    return None


def _same_noun(noun: str, word: str) -> bool:
    """Whether ``word`` is ``noun``, or either is the other's plural (room/rooms, enemy/enemies)."""
    return noun in _forms(word) or word in _forms(noun)


def _forms(word: str) -> set[str]:
    forms = {word, word + "s", word + "es"}
    if word.endswith("y"):
        forms.add(word[:-1] + "ies")
    return forms


def _items(text: str) -> list[str]:
    quoted = [next(part for part in found if part) for found in _QUOTED_ITEM.findall(text)]
    if quoted:
        items = quoted
    else:
        bare = text.strip("[](){} ")  # a list in brackets: "(rooms: Hall, Cellar)"
        items = [item.strip() for item in re.split(r",|\s+(?:or|and)\s+", bare)]
        explains = any(_EXPLAINING_WORDS & set(_words(item)) for item in items)
        if explains or any(char in bare for char in ":()"):
            return []
    return [item for item in items if item and item.lower() not in _NO_ITEMS]


def _words(text: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)  # camelCase -> camel Case
    return [word for word in re.split(r"[^A-Za-z]+", spaced.lower()) if word]


def _names_parameter(error: str, name: str) -> bool:
    """Whether ``error`` writes ``name`` as a word, or its plural (``free directions: ...``)."""
    return any(
        re.search(rf"(?<![\w]){re.escape(form)}(?![\w])", error) is not None
        for form in _forms(name)
    )


def _quotes_value(error: str, value: Any) -> bool:
    if not isinstance(value, str) or not value.strip():
        return False  # an empty text is blamed only through its parameter's name
    return any(f"{open_}{value}{close}" in error for open_, close in _QUOTES)


#: Quote pairs an error may put around a value the model wrote.
_QUOTES = (("'", "'"), ('"', '"'), ("`", "`"), ("“", "”"), ("‘", "’"))
