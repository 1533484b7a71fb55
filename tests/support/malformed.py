"""Malformed model output for property tests: what a broken small model might write.

``malformed_text(rng, vocabulary)`` draws one completion from a seeded ``random.Random``: fast
enough for tens of thousands of program runs. ``malformed_texts()`` is the same generator as
a hypothesis strategy (hypothesis drives the random choices, so failures shrink), mixed with
hypothesis' own text and fragment soups. ``malformed_answer`` wraps a text the way a fake LM
can return it: raw text, or output fields holding junk (then the adapter's parse succeeds
and the roles' cleaning sees the junk).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

# fmt: off
#: Openers that nest: hundreds of them exhaust a recursive parser.
NESTING_UNITS = (
    "[", "{", '{"a":', '["', "[{", '{"arguments":', '{"tool": "x", "parameters": ', "(",
)
#: Pieces of the formats the roles and adapters read, and of what breaks them.
FRAGMENTS = (
    "{", "}", "[", "]", '"', "'", ":", ",", "\\", "\\u", "\\ud800", "null", "true", "1e999",
    "```", "```json\n", "```python\n", "\n", "\r\n", "\t", " ", "  ", "- ", "* ", "1. ", "2) ",
    "**", "`", "[[ ## ", " ## ]]", "[[ ## completed ## ]]", "-- YES", "-- NO", " yes", ": no",
    "->", "=>", "—", "Assessment finished.", "Thinking:", "conversation", "none", "give_up",
    "OpError", "$$$", "=", "and", ";", "\x00", "\x07", "\x1b[31m", "\u202e", "\u200b", "\ufeff",
    "é", "ß", "漢字", "🙂", "👩‍👩‍👧", "\U0010ffff", "NaN", "-Infinity", "0x1F", "9" * 50,
)
#: Output field names of the roles: junk that mentions them reaches deeper into the parsers.
FIELD_NAMES = (
    "intents", "arguments", "reply", "thinking", "assessment", "selected", "response", "API",
    "parameters", "apis", "final_api", "missing", "supporting_api", "tool", "name", "function",
)
_WORDS = ("add_task", "list_tasks", "title", "priority", "YES", "NO", "ok", "x", "none")
# fmt: on

Shape = Callable[[random.Random, Sequence[str]], str]


def _nesting(rng: random.Random, words: Sequence[str]) -> str:
    # Rarely thousands deep: json_repair (in DSPy's adapters too) is quadratic on some units.
    if rng.random() < 0.05:
        depth = rng.randint(400, 3000)
    else:
        depth = rng.choice((rng.randint(1, 80), rng.randint(50, 400)))
    closing = rng.choice(("]", "}", '"')) * rng.randint(0, depth) if rng.random() < 0.5 else ""
    return rng.choice(NESTING_UNITS) * depth + closing


def _soup(rng: random.Random, words: Sequence[str]) -> str:
    pool = (*FRAGMENTS, *FIELD_NAMES, *words)
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 60)))


def _broken_json(rng: random.Random, words: Sequence[str]) -> str:
    """A JSON object of field names and junk, truncated or with a bracket flipped."""
    value: Any = {rng.choice(FIELD_NAMES): _value(rng, words, 3) for _ in range(rng.randint(1, 3))}
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    cut = rng.randint(0, len(text))
    if rng.random() < 0.5:
        return text[:cut]
    return text[:cut] + rng.choice("{}[]\"',:") + text[cut:]


def _value(rng: random.Random, words: Sequence[str], depth: int) -> Any:
    kind = rng.randint(0, 5 if depth else 2)
    if kind == 0:
        return rng.choice((*words, *FIELD_NAMES, ""))
    if kind == 1:
        return rng.choice((None, True, 0, -1.5, 10**30))
    if kind == 2:
        return _soup(rng, words)[:40]
    if kind == 3:
        return [_value(rng, words, depth - 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice((*FIELD_NAMES, *words)): _value(rng, words, depth - 1) for _ in range(2)}


def _chat_fields(rng: random.Random, words: Sequence[str]) -> str:
    """ChatAdapter markers around junk, some unclosed or misspelled."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice((*FIELD_NAMES, "completed", "", "intent s"))
        parts.append(f"[[ ## {name} ## ]]\n{rng.choice((_soup, _broken_json, _lines))(rng, words)}")
    return "\n\n".join(parts)


def _lines(rng: random.Random, words: Sequence[str]) -> str:
    """Verdict, bullet and ``name: value`` lines with odd separators and spacing."""
    lines = []
    for _ in range(rng.randint(1, 8)):
        name = rng.choice((*words, *FIELD_NAMES, ""))
        separator = rng.choice((" -- ", ":", " - ", "=", " ", "->", " | ", "—", "=>", ""))
        verdict = rng.choice(("YES", "no", "Yes.", "maybe", '"x"', "[1, 2", "{", ""))
        lines.append(f"{rng.choice(('', '- ', '* ', '1. ', '> '))}{name}{separator}{verdict}")
    if rng.random() < 0.3:
        lines.append("Assessment finished.")
    return "\n".join(lines)


def _runs(rng: random.Random, words: Sequence[str]) -> str:
    """Long runs of one character: the input that makes a backtracking regex slow."""
    run = rng.choice((" ", "-", "- ", "-- ", " !", "`", "```a", "\n", "a", "[[ ## ", "\\"))
    return (
        rng.choice(("x", "", "a:", "- "))
        + run * rng.randint(100, 4000)
        + rng.choice(("!", "yes", ""))
    )


def _unicode(rng: random.Random, words: Sequence[str]) -> str:
    """Control characters, combining marks, emoji, private use and lone surrogates."""
    ranges = ((0, 0x1F), (0x7F, 0x9F), (0x300, 0x36F), (0x1F300, 0x1F6FF), (0xE000, 0xE0FF))
    low, high = rng.choice(((0xD800, 0xDFFF), *ranges))
    return "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 40)))


def _fenced(rng: random.Random, words: Sequence[str]) -> str:
    body = rng.choice((_soup, _broken_json, _lines, _nesting))(rng, words)
    closing = rng.choice(("```", "", "``", "```\n```"))
    return f"{rng.choice(('', 'Sure! '))}```{rng.choice(('json', '', 'py'))}\n{body}\n{closing}"


def _huge(rng: random.Random, words: Sequence[str]) -> str:
    piece = rng.choice((_soup, _broken_json, _lines))(rng, words) or "{"
    return piece * (20_000 // len(piece) + 1)


SHAPES: tuple[Shape, ...] = (
    _nesting,
    _soup,
    _broken_json,
    _chat_fields,
    _lines,
    _runs,
    _unicode,
    _fenced,
)


def malformed_text(
    rng: random.Random, vocabulary: Sequence[str] = (), *, huge: bool = False
) -> str:
    """Draw one malformed completion; ``vocabulary`` adds tool names and such to the junk.

    One draw in fifty is ~20,000 characters when ``huge`` (kept rare: parsing it takes time).
    """
    words = (*_WORDS, *vocabulary)
    if huge and rng.random() < 0.02:
        return _huge(rng, words)
    if rng.random() < 0.15:  # two shapes glued together
        return rng.choice(SHAPES)(rng, words) + rng.choice(SHAPES)(rng, words)
    return rng.choice(SHAPES)(rng, words)


def malformed_answer(
    rng: random.Random, fields: Sequence[str], vocabulary: Sequence[str] = ()
) -> Any:
    """Raw junk text (mostly), or every output field filled with junk text or junk values."""
    if not fields or rng.random() < 0.7:
        return malformed_text(rng, vocabulary)
    words = (*_WORDS, *vocabulary)
    return {
        name: rng.choice((malformed_text(rng, vocabulary), _value(rng, words, 3)))
        for name in fields
    }


def malformed_texts(
    vocabulary: Sequence[str] = (), *, huge: bool = False
) -> st.SearchStrategy[str]:
    """Hypothesis strategy: the seeded generator, fragment soups and arbitrary text."""
    pieces = st.sampled_from((*FRAGMENTS, *FIELD_NAMES, *_WORDS, *vocabulary))
    generated = st.randoms(use_true_random=False).map(
        lambda rng: malformed_text(rng, vocabulary, huge=huge)
    )
    return st.one_of(
        generated,
        st.lists(pieces | st.text(max_size=4), max_size=40).map("".join),
        st.builds(str.__mul__, st.sampled_from(NESTING_UNITS), st.integers(0, 2000)),
        st.text(),
    )
