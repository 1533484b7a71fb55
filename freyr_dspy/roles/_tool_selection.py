"""``tool_selection``: the NLT selector (Johnson, Pain, West 2025).

The model first thinks, then assesses **every** tool of the catalog with YES or NO, then
writes ``Assessment finished.``. Listing every tool (instead of naming the wanted ones) is
what makes small models reliable: each decision is a local yes/no, and a parser - not the
model's function-calling format - turns the YES lines into calls. Several tools may be
selected at once.

Per call, ``selection_contract`` types the assessment as exactly those lines: every tool of the
catalog in order, ``-- YES`` or ``-- NO``, then ``Assessment finished.`` (a string pattern).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy

from freyr_dspy.prompting import (
    MAX_NESTED_JSON,
    Contract,
    load_json,
    parse_text,
    pattern_literal,
    strip_fences,
)
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._registry import register_role
from freyr_dspy.tools import Toolbox, normalize_name

__all__ = [
    "Assessment",
    "ToolSelector",
    "assess",
    "parse_assessment",
    "render_selection_catalog",
    "selection_contract",
]

_END = re.compile(r"assessment\s+(?:is\s+)?finished", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•+>]|\d+[.)])\s+")
# "--", en/em dashes, ":", "->", "=>", "→", "=", "|" or a lone " - " between name and verdict.
# NOTE: a separator starts only where a whitespace run starts, and runs are matched
# possessively: the regexes stay linear on a line of thousands of spaces or dashes.
_SEPARATOR = re.compile(r"(?<!\s)\s*+(?:-{2,}|[–—:→=|]|->|=>)\s*|(?<!\s)\s++-\s+")
_NON_WORD = re.compile(r"[\W_]*+")
_NON_WORD_CHAR = re.compile(r"[\W_]")
_YES_NO = re.compile(r"(yes|no)\b", re.I)
_LABELS = {"thinking", "reasoning", "thought", "answer", "assessment", "verdict"}
# A verdict ending the line ("Website info yes", "Website info: no.") after some whitespace.
_VERDICT_AT_END = re.compile(r"(?<=[\W_])(yes|no)\b[\W_]*+\Z", re.I)


class ToolSelectionSignature(dspy.Signature):
    """Decide which of the listed tools the user's latest message needs.

    First think briefly about what the message asks for. Then assess every tool of the
    list, one per line, written exactly as `Tool name -- YES` when the message needs it or
    `Tool name -- NO` when it does not. Several tools may be YES, or none. End with the
    line `Assessment finished.`
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    tools: str = dspy.InputField(desc="every tool to assess: its name and when it applies")
    thinking: str = dspy.OutputField(desc="short reasoning about what the message asks for")
    assessment: str = dspy.OutputField(
        desc="one line per tool: `Tool name -- YES` or `Tool name -- NO`, "
        "then `Assessment finished.`"
    )


@dataclass(frozen=True)
class Assessment:
    """The parsed YES/NO list.

    ``selected`` keeps catalog order; ``missing`` are tools the model did not mention (they
    count as NO); ``unknown`` are names it wrote that match no tool (ignored, reported).
    """

    selected: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    finished: bool = False
    verdicts: dict[str, bool] = field(default_factory=dict)


def parse_assessment(value: Any, names: Sequence[str]) -> Assessment:
    """Read a YES/NO assessment of the tools ``names`` from what the model wrote.

    Tolerates case, ``--``/``–``/``—``/``:``/``->`` separators, bullets, bold markers,
    explanations after the verdict, JSON objects (``{"Tool": "YES"}``) and lists. Text
    after ``Assessment finished`` is ignored; so are lines without a verdict (thinking).

    Args:
        value: the assessment as text, a dict or a list (whatever the adapter produced).
        names: the tool names of the catalog, in catalog order.

    Returns:
        The selected, rejected, missing and unknown tools.
    """
    text, finished = _cut_at_end(_as_lines(value))
    table = {normalize_name(name): name for name in names}
    verdicts: dict[str, bool] = {}
    unknown: list[str] = []
    for line in text.splitlines():
        entry = _read_line(line)
        if entry is None:
            continue
        written, yes = entry
        name = _resolve(written, table)
        if name is None:
            # a label ("Thinking: no ...") or prose is not a tool name worth reporting
            if _is_reportable(written) and written not in unknown:
                unknown.append(written)
        else:
            verdicts.setdefault(name, yes)  # the first verdict on a tool wins
    return Assessment(
        selected=tuple(n for n in names if verdicts.get(n) is True),
        rejected=tuple(n for n in names if verdicts.get(n) is False),
        missing=tuple(n for n in names if n not in verdicts),
        unknown=tuple(unknown),
        finished=finished,
        verdicts=verdicts,
    )


def _as_lines(value: Any, *, nested: int = 0) -> str:
    """Flatten whatever the adapter returned into ``name -- verdict`` lines of text.

    ``nested`` counts the JSON texts parsed on the way to ``value`` (see ``MAX_NESTED_JSON``).
    """
    if value is None:
        return ""
    if isinstance(value, dict):
        return "\n".join(_dict_line(k, v, nested) for k, v in value.items())
    if isinstance(value, list | tuple):
        return "\n".join(_as_lines(item, nested=nested) for item in value)
    text = strip_fences(str(value))
    if nested <= MAX_NESTED_JSON and text.startswith(("{", "[")):
        parsed = load_json(text)
        if isinstance(parsed, dict | list) and parsed:
            return _as_lines(parsed, nested=nested + 1)
    return text


def _dict_line(key: str, value: Any, nested: int) -> str:
    if isinstance(value, bool):
        return f"{key} -- {'YES' if value else 'NO'}"
    if isinstance(value, dict | list):
        return _as_lines(value, nested=nested)
    return f"{key} -- {value}"


def _cut_at_end(text: str) -> tuple[str, bool]:
    match = _END.search(text)
    return (text[: match.start()], True) if match else (text, False)


def _read_line(line: str) -> tuple[str, bool] | None:
    """Return (written name, verdict) for a verdict line, None for any other line."""
    clean = _BULLET.sub("", line.replace("**", "").replace("`", "")).strip()
    if not clean:
        return None
    return _separated_verdict(clean) or _trailing_verdict(clean)


def _separated_verdict(clean: str) -> tuple[str, bool] | None:
    """``name -- YES, because ...``: the first separator followed by a verdict word."""
    word_at = -1  # separators in one run of non-word characters share the word after it
    for match in _SEPARATOR.finditer(clean):
        if match.start() == 0 or match.end() <= word_at:
            continue
        word_at = _NON_WORD.match(clean, match.end()).end()  # type: ignore[union-attr]
        verdict = _YES_NO.match(clean, word_at)
        if verdict:
            return _strip_name(clean[: match.start()]), verdict.group(1).lower() == "yes"
    return None


def _trailing_verdict(clean: str) -> tuple[str, bool] | None:
    """``name yes`` / ``name: no.``: a verdict ending the line, after whitespace."""
    verdict = _VERDICT_AT_END.search(clean)
    if verdict is None:
        return None
    head = clean[: verdict.start()]
    start = len(head)  # the run of non-word characters between name and verdict
    while start > 0 and _NON_WORD_CHAR.match(head[start - 1]):
        start -= 1
    space = next((i for i in range(max(start, 1), len(head)) if head[i].isspace()), None)
    if space is None:
        return None
    return _strip_name(head[:space]), verdict.group(1).lower() == "yes"


def _is_reportable(written: str) -> bool:
    key = normalize_name(written)
    return bool(key) and len(written) <= 60 and key not in _LABELS


def _strip_name(name: str) -> str:
    return name.strip().strip("'\"[]().,").strip()


def _resolve(written: str, table: dict[str, str]) -> str | None:
    """Match a written name to a tool: exact ignoring case/spacing, else by containment.

    "check_website_information" or "Topic: Website information" contain one tool's name
    (nested hits keep the longest); "Website info" is contained in exactly one name.
    """
    key = normalize_name(written)
    if key in table:
        return table[key]
    hits = [k for k in table if k and k in key]
    longest = max(hits, key=len, default="")
    if longest and all(h in longest for h in hits):
        return table[longest]
    partial = [k for k in table if len(key) > 3 and key in k]
    return table[partial[0]] if len(partial) == 1 else None


def render_selection_catalog(toolbox: Toolbox, level: str = "brief") -> str:
    """Render the tools for the selector: ``- Name: description`` (full description).

    The selector decides *whether* to call a tool, so parameters are left out; the whole
    description is kept because NLT-style descriptions state the boundaries of a topic
    ("distinct from social media!"). ``names`` gives the names only.
    """
    if level == "names":
        return "\n".join(f"- {tool.name}" for tool in toolbox)
    return "\n".join(f"- {tool.name}: {' '.join(tool.description.split())}" for tool in toolbox)


class ToolSelector(Role):
    """Assess every tool with YES/NO and select the YES ones (NLT)."""

    signature = ToolSelectionSignature

    def use_instructions(self, instructions: str) -> None:
        """Replace the role's instructions (e.g. by a paper's system prompt), keeping fields."""
        self.predict.signature = self.predict.signature.with_instructions(instructions)

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Split raw text into thinking (before the first verdict line) and assessment."""
        body = strip_fences(text)
        parsed = load_json(body) if body.startswith("{") else None
        if isinstance(parsed, dict) and ("assessment" in parsed or "thinking" in parsed):
            return {"thinking": parsed.get("thinking", ""), "assessment": parsed.get("assessment")}
        lines = body.splitlines()
        first = next((i for i, line in enumerate(lines) if _read_line(line)), len(lines))
        thinking = re.sub(r"^\s*thinking\s*:\s*", "", "\n".join(lines[:first]), flags=re.I)
        return {"thinking": thinking.strip(), "assessment": "\n".join(lines[first:])}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the thinking as text and the assessment as verdict lines."""
        return {
            "thinking": parse_text(outputs.get("thinking")),
            "assessment": _as_lines(outputs.get("assessment")).strip(),
        }


def selection_contract(names: Sequence[str]) -> Contract:
    """The assessment of one call: ``name -- YES|NO`` for each of ``names``, then the end line.

    Empty (unconstrained text) for no tools, or when a name has characters no pattern
    converter reads alike (``pattern_literal``).
    """
    literals = [pattern_literal(name) for name in names]
    if not literals or None in literals:
        return {}
    lines = [f"{literal} -- (YES|NO)" for literal in literals]
    pattern = "^" + "\\n".join([*lines, "Assessment finished[.]"]) + "$"
    return {"assessment": {"type": "string", "pattern": pattern}}


def assess(prediction: dspy.Prediction, names: Iterable[str]) -> Assessment:
    """Parse a selector prediction; fall back to the thinking when the assessment is empty.

    Tiny models sometimes write the YES/NO lines into the thinking field.
    """
    names = list(names)
    result = parse_assessment(prediction.get("assessment"), names)
    if not result.verdicts:
        from_thinking = parse_assessment(prediction.get("thinking"), names)
        if from_thinking.verdicts:
            return from_thinking
    return result


register_role("tool_selection", ToolSelector)
