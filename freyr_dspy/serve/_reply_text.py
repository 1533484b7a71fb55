"""The reply's words out of a role's JSON answer while the model is still writing it.

The reply roles answer ``{"reply": "..."}`` (the lean and JSON adapters). ``FieldText`` reads
that text as it arrives, in pieces of any size, and gives back the characters of one
top-level string field decoded (escapes, unicode escapes, surrogate pairs) as soon as they are
certain: an escape or a surrogate pair cut between two pieces waits for its end. Other fields
and nested values are skipped. An answer that is not a JSON object, or whose field is not a
string, gives nothing: the reply then goes out whole once the role is done.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator

__all__ = ["FieldText"]

#: The longest escape: a surrogate pair ``\uD83D\uDE00``.
_LONGEST_ESCAPE = 12

#: A surrogate code point left unpaired after decoding.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: What the parser receives: one character at a time.
_Parser = Generator[None, str, None]


class FieldText:
    """Decode one top-level string field of a JSON object from its text, piece by piece.

    Args:
        key: the field whose value is wanted (``reply``).
    """

    def __init__(self, key: str = "reply") -> None:
        self.key = key
        #: Whether the field's string has ended (nothing more will come).
        self.done = False
        self._raw: list[str] = []  # the field's escaped characters so far
        self._sent = ""  # the decoded text already given back
        self._closed = False
        self._parser = self._object()
        next(self._parser)

    def feed(self, text: str) -> str:
        """Read the next piece of the answer; return the field's new decoded characters."""
        for char in text:
            if self.done:
                break
            try:
                self._parser.send(char)
            except StopIteration:
                self.done = True
        return self._new_text()

    def _new_text(self) -> str:
        decoded = _decoded(self._raw, final=self._closed)
        if len(decoded) <= len(self._sent) or not decoded.startswith(self._sent):
            return ""  # nothing certain yet (or junk an escape turned into something else)
        new, self._sent = decoded[len(self._sent) :], decoded
        return new

    # ------------------------------------------------------------------ the parser
    # Each ``yield`` takes the next character; sub-parsers return what follows them.

    def _object(self) -> _Parser:
        char = yield from _nonspace((yield))
        if char != "{":
            return
        char = yield from _nonspace((yield))
        while char == '"':
            name = yield from _string()
            char = yield from _nonspace((yield))
            if char != ":":
                return
            char = yield from _nonspace((yield))
            if name == self.key:
                if char == '"':
                    yield from self._field()
                return
            char = yield from _skip_value(char)
            if char != ",":
                return
            char = yield from _nonspace((yield))

    def _field(self) -> _Parser:
        """Collect the field's escaped characters up to its closing quote."""
        escaped = False
        while True:
            char = yield
            if char == '"' and not escaped:
                self._closed = True
                return
            escaped = char == "\\" and not escaped
            self._raw.append(char)


def _nonspace(char: str) -> Generator[None, str, str]:
    """The first character from ``char`` on that is not white space."""
    while char.isspace():
        char = yield
    return char


def _string() -> Generator[None, str, str]:
    """Read a string after its opening quote; return it decoded."""
    raw: list[str] = []
    escaped = False
    while True:
        char = yield
        if char == '"' and not escaped:
            return _decoded(raw, final=True)
        escaped = char == "\\" and not escaped
        raw.append(char)


def _skip_value(char: str) -> Generator[None, str, str]:
    """Skip a value starting with ``char``; return the first non-space character after it."""
    if char == '"':
        yield from _string()
        return (yield from _nonspace((yield)))
    if char in "[{":
        depth = 1
        while depth:
            char = yield
            if char == '"':
                yield from _string()
            elif char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
        return (yield from _nonspace((yield)))
    while char not in ",}]" and not char.isspace():  # a number, true, false or null
        char = yield
    return (yield from _nonspace(char))


def _decoded(raw: list[str], *, final: bool) -> str:
    """Decode a JSON string's escaped characters, up to the last certain one.

    Before the string has ended, an escape cut short and a high surrogate that may yet be
    paired are held back. A lone surrogate becomes U+FFFD (it cannot be sent as UTF-8); at
    the end, text after an escape JSON does not know is dropped.
    """
    text = "".join(raw)
    lowest = 0 if final else max(len(text) - _LONGEST_ESCAPE, 0)
    for cut in range(len(text), lowest - 1, -1):
        try:
            decoded: str = json.loads(f'"{text[:cut]}"')
        except json.JSONDecodeError:
            continue
        if not final and decoded and "\ud800" <= decoded[-1] <= "\udbff":
            continue  # a pair's first half: its second may come in the next piece
        return _LONE_SURROGATE.sub("\ufffd", decoded)
    return ""
