"""A small GBNF recognizer for tests: does a llama.cpp grammar accept this exact text?

llama.cpp checks a grammar only while sampling tokens of a loaded model, and llama-cpp-python's
``LlamaGrammar.from_string`` merely keeps the text. To test the grammars built from role
contracts without a model, this module parses GBNF (the subset that grammar writers use:
literals, character classes, rule references, groups, ``|``, ``* + ? {m} {m,} {m,n}``) and
matches a whole string, by sets of end positions (no left recursion in generated grammars).
``parses_in_llama_cpp`` asks llama.cpp's own parser whether it accepts the grammar text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[a-zA-Z0-9_-]+")


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Chars:
    ranges: tuple[tuple[int, int], ...]
    negated: bool

    def accepts(self, char: str) -> bool:
        inside = any(lo <= ord(char) <= hi for lo, hi in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[object, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[object, ...]


@dataclass(frozen=True)
class Repeat:
    item: object
    low: int
    high: int | None


class Grammar:
    """A parsed GBNF grammar; ``accepts(text)`` matches ``text`` from ``root`` to the end."""

    def __init__(self, text: str) -> None:
        self.rules: dict[str, object] = {}
        for name, body in _rule_texts(text):
            parser = _Parser(body)
            self.rules[name] = parser.alternatives()
            if parser.pos != len(parser.text):
                raise ValueError(f"rule {name}: cannot parse {parser.text[parser.pos :]!r}")
        missing = {ref for rule in self.rules.values() for ref in _refs(rule)} - set(self.rules)
        if missing or "root" not in self.rules:
            raise ValueError(f"undefined rules: {sorted(missing) or ['root']}")

    def accepts(self, text: str) -> bool:
        """Tell whether the grammar generates exactly ``text``."""
        return len(text) in _Matcher(self.rules, text).ends(self.rules["root"], 0)


class _Matcher:
    """Where matches of grammar nodes over one text can end, memoised per (node, start)."""

    def __init__(self, rules: dict[str, object], text: str) -> None:
        self.rules, self.text = rules, text
        self.memo: dict[tuple[object, int], frozenset[int]] = {}

    def ends(self, node: object, start: int) -> frozenset[int]:
        key = (node, start)
        if key not in self.memo:
            self.memo[key] = self._ends(node, start)
        return self.memo[key]

    def _ends(self, node: object, start: int) -> frozenset[int]:
        text = self.text
        if isinstance(node, Lit):
            found = text.startswith(node.text, start)
            return frozenset({start + len(node.text)}) if found else _NONE
        if isinstance(node, Chars):
            ok = start < len(text) and node.accepts(text[start])
            return frozenset({start + 1}) if ok else _NONE
        if isinstance(node, Ref):
            return self.ends(self.rules[node.name], start)
        if isinstance(node, Alt):
            return frozenset(end for option in node.options for end in self.ends(option, start))
        if isinstance(node, Seq):
            positions = frozenset({start})
            for item in node.items:
                positions = frozenset(end for p in positions for end in self.ends(item, p))
            return positions
        assert isinstance(node, Repeat)
        return self._repeat(node, start)

    def _repeat(self, node: Repeat, start: int) -> frozenset[int]:
        reached: set[int] = set()
        current, count = {start}, 0
        while current:
            if count >= node.low:
                new = current - reached
                reached |= current
                if not new:
                    break  # more repetitions reach nothing else
            if count == node.high:
                break
            current = {end for p in current for end in self.ends(node.item, p)}
            count += 1
        return frozenset(reached)


_NONE: frozenset[int] = frozenset()


def _rule_texts(text: str) -> list[tuple[str, str]]:
    rules: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "::=" in line and _NAME.fullmatch(line.split("::=", 1)[0].strip()):
            name, body = line.split("::=", 1)
            rules.append((name.strip(), body))
        else:
            name, body = rules[-1]
            rules[-1] = (name, body + " " + line)
    return rules


def _refs(node: object) -> set[str]:
    if isinstance(node, Ref):
        return {node.name}
    children: tuple[object, ...] = ()
    if isinstance(node, Seq):
        children = node.items
    elif isinstance(node, Alt):
        children = node.options
    elif isinstance(node, Repeat):
        children = (node.item,)
    return {ref for child in children for ref in _refs(child)}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text.strip()
        self.pos = 0

    def alternatives(self) -> object:
        options = [self.sequence()]
        while self._skip() and self._peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def sequence(self) -> object:
        items = []
        while self._skip() and self._peek() not in ("|", ")", ""):
            items.append(self._quantified(self._atom()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def _atom(self) -> object:
        char = self._peek()
        if char == '"':
            self.pos += 1
            text = ""
            while self._peek() != '"':
                text += self._char()
            self.pos += 1
            return Lit(text)
        if char == "[":
            return self._class()
        if char == "(":
            self.pos += 1
            inner = self.alternatives()
            assert self._peek() == ")", f"expected ')' in {self.text!r}"
            self.pos += 1
            return inner
        if char == ".":
            self.pos += 1
            return Chars(((0x0A, 0x0A),), negated=True)
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise ValueError(f"unexpected {self.text[self.pos :]!r}")
        self.pos = match.end()
        return Ref(match.group(0))

    def _class(self) -> Chars:
        self.pos += 1
        negated = self._peek() == "^"
        self.pos += negated
        ranges = []
        while self._peek() != "]":
            low = self._char()
            high = low
            if self._peek() == "-" and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self._char()
            ranges.append((ord(low), ord(high)))
        self.pos += 1
        return Chars(tuple(ranges), negated)

    def _quantified(self, atom: object) -> object:
        char = self._peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            return Repeat(atom, 1 if char == "+" else 0, 1 if char == "?" else None)
        if char == "{":
            end = self.text.index("}", self.pos)
            low, _, high = self.text[self.pos + 1 : end].partition(",")
            bounded = "," not in self.text[self.pos + 1 : end]
            self.pos = end + 1
            maximum = int(low) if bounded else (int(high) if high.strip() else None)
            return Repeat(atom, int(low or 0), maximum)
        return atom

    def _char(self) -> str:
        char = self.text[self.pos]
        if char != "\\":
            self.pos += 1
            return char
        code = self.text[self.pos + 1]
        simple = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}
        if code in simple:
            self.pos += 2
            return simple[code]
        width = {"x": 2, "u": 4, "U": 8}[code]
        value = int(self.text[self.pos + 2 : self.pos + 2 + width], 16)
        self.pos += 2 + width
        return chr(value)

    def _skip(self) -> bool:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return True

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""


def parses_in_llama_cpp(grammar: str) -> bool:
    """Ask llama.cpp's own grammar parser (no model: a null vocabulary) about ``grammar``."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(None, grammar.encode(), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True
