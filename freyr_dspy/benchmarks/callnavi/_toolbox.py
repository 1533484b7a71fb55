"""CallNavi APIs as a spec-only ``Toolbox`` with derived libraries, and their catalog renderings.

Nothing is executed in CallNavi (the benchmark scores the planned calls), so every API becomes
a ``Tool`` with ``func=None``; the raw type hints and return values ride along in
``Tool.extra`` for the renderings.

**Libraries** (for GeckOpt-style gating over 100-API catalogs) are derived from the API names,
because the data has no grouping. A camelCase name is split into words; the first word is the
verb (``get``, ``applyFor`` ...) and the remaining content words are the API's *topics*
(``getCreditCardStatement`` -> credit, card, statement). Libraries are then built greedily:
a word that more than half of the catalog shares (``Policy`` in an insurer's
``getPolicyQuote``, ``renewPolicy`` ...) names the domain and is set aside; then
the topic shared by the most ungrouped APIs becomes a library holding all of them, until no
topic is shared by two APIs. An API left alone joins the library whose topics overlap its
name's words most, then its description's words; what still fits nowhere goes to ``misc``.
Each library is described by its most frequent topics, so a gate sees a short list (bank: 96
APIs -> about 16 libraries) instead of every API.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from freyr_dspy.benchmarks.callnavi._data import ApiSpec, CallNaviDomain
from freyr_dspy.tools import Tool, Toolbox, ToolParameter

__all__ = [
    "MISC_LIBRARY",
    "ApiCatalogLevel",
    "api_tool",
    "api_topics",
    "derive_libraries",
    "make_toolbox",
    "render_api",
    "render_catalog",
]

ApiCatalogLevel = Literal["names", "brief", "full", "paper"]

MISC_LIBRARY = "misc"

#: Below this many APIs a word shared by most names is still a fine library of its own.
_MIN_APIS_FOR_DOMAIN_WORDS = 6

#: Words that say nothing about an API's subject (prepositions, qualifiers, generic nouns).
_NON_TOPICS = frozenset(
    """for to from in on by as of and the a an with id ids new list details detail info
    information status available nearest multiple my all given specific user's this that is
    are be or it its their based using about into at retrieve retrieves get gets provide
    provides return returns""".split()
)


def api_tool(spec: ApiSpec, library: str | None = None) -> Tool:
    """Turn one API into a spec-only tool (every parameter required, as the data implies)."""
    parameters = tuple(
        ToolParameter(name, *_type_and_description(hint), required=True)
        for name, hint in spec.parameters.items()
    )
    return Tool(
        name=spec.name,
        description=spec.description,
        parameters=parameters,
        library=library,
        extra={"hints": spec.parameters, "returns": spec.returns, "form": spec.form},
    )


def make_toolbox(domain: CallNaviDomain) -> Toolbox:
    """Build a domain's toolbox with derived libraries and their descriptions."""
    libraries, descriptions = derive_libraries(domain.apis)
    library_of = {name: library for library, names in libraries.items() for name in names}
    return Toolbox(
        [api_tool(spec, library_of[spec.name]) for spec in domain.apis],
        library_descriptions=descriptions,
    )


def derive_libraries(
    apis: Sequence[ApiSpec],
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Group APIs into libraries by shared topic words (see the module docstring).

    Returns:
        (library -> API names in catalog order, library -> one-line description).
    """
    topics = _without_domain_words({api.name: api_topics(api.name) for api in apis})
    order = {api.name: i for i, api in enumerate(apis)}
    libraries = _greedy_groups(topics)
    grouped = {name for names in libraries.values() for name in names}
    for api in apis:
        if api.name not in grouped:
            library = _closest_library(api, libraries, topics)
            libraries.setdefault(library, []).append(api.name)
    libraries = {k: sorted(v, key=order.__getitem__) for k, v in libraries.items()}
    descriptions = {k: _describe(k, v, topics) for k, v in libraries.items()}
    return libraries, descriptions


def api_topics(name: str) -> list[str]:
    """Content words of an API name after its verb (``getATMCardList`` -> atm, card)."""
    # NOTE: "IDfrom" (getAccountIDfromName) would otherwise split as "I" + "Dfrom".
    spaced = re.sub(r"ID(?=[a-z])", "ID ", name)
    words = [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", spaced)]
    if not words:
        return [name.lower()]
    content = [_stem(w) for w in words[1:] if w not in _NON_TOPICS]
    # A bare verb (``checkout``) is its own topic.
    return list(dict.fromkeys(content)) or [_stem(words[0])]


def _without_domain_words(topics: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop words that most of the catalog shares (every name saying ``Policy``).

    Such a word names the domain, not a topic: grouping by it would put the whole catalog into
    one library and leave a gate nothing to choose. An API whose only topic is a domain word
    keeps it.
    """
    if len(topics) < _MIN_APIS_FOR_DOMAIN_WORDS:
        return topics
    counts = Counter(t for words in topics.values() for t in words)
    domain_words = {t for t, n in counts.items() if n > len(topics) / 2}
    return {
        name: [t for t in words if t not in domain_words] or words for name, words in topics.items()
    }


def _greedy_groups(topics: dict[str, list[str]]) -> dict[str, list[str]]:
    libraries: dict[str, list[str]] = {}
    pending = set(topics)
    while pending:
        counts = Counter(t for name in pending for t in topics[name])
        # Ties go to the topic that comes earliest in the names (the head noun), then by name.
        key, count = min(
            counts.items(),
            key=lambda kv: (-kv[1], _mean_position(kv[0], pending, topics), kv[0]),
        )
        if count < 2:
            break
        members = [name for name in pending if key in topics[name]]
        libraries[key] = members
        pending -= set(members)
    return libraries


def _mean_position(topic: str, pending: set[str], topics: dict[str, list[str]]) -> float:
    positions = [topics[n].index(topic) for n in pending if topic in topics[n]]
    return sum(positions) / len(positions)


def _closest_library(
    api: ApiSpec, libraries: dict[str, list[str]], topics: dict[str, list[str]]
) -> str:
    """The library sharing most words with the API's name, then with its description."""
    vocab = {lib: {t for n in names for t in topics[n]} for lib, names in libraries.items()}
    for words in (set(topics[api.name]), _description_words(api.description)):
        scored = [(len(words & v), lib) for lib, v in vocab.items() if lib != MISC_LIBRARY]
        best = max(scored, default=(0, MISC_LIBRARY))
        if best[0] > 0:
            return best[1]
    return MISC_LIBRARY


def _description_words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z]+", text.lower()) if w not in _NON_TOPICS}


def _describe(library: str, names: list[str], topics: dict[str, list[str]]) -> str:
    counts = Counter(t for n in names for t in topics[n] if t != library)
    common = ", ".join(t for t, _ in counts.most_common(6))
    about = f" ({common})" if common else ""
    count = f"{len(names)} API" + ("s" if len(names) != 1 else "")
    return f"{count} about {library}{about}"


def _stem(word: str) -> str:
    """A crude singular: enough to put ``Items`` and ``Item`` together."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


# --------------------------------------------------------------------------- rendering


def render_catalog(toolbox: Toolbox, level: ApiCatalogLevel = "brief") -> str:
    """Render every API of a toolbox at one level of detail, one block per API."""
    return "\n".join(render_api(tool, level) for tool in toolbox)


def render_api(tool: Tool, level: ApiCatalogLevel = "full") -> str:
    """Render one API.

    Levels: ``names`` (the name), ``brief`` (name: description), ``full`` (a one-line
    signature with type hints and return values, then the description) and ``paper`` (the
    pseudo-Python function block the paper's prompts use, for faithful token counts).
    """
    if level == "names":
        return f"- {tool.name}"
    if level == "brief":
        return f"- {tool.name}: {tool.description}"
    hints: dict[str, Any] = tool.extra.get("hints", {p.name: p.type for p in tool.parameters})
    if level == "paper":
        return _paper_block(tool, hints)
    arguments = ", ".join(
        name if hint is None else f"{name}: {_hint_text(hint)}" for name, hint in hints.items()
    )
    returns = _returns_text(tool.extra.get("returns"))
    arrow = f" -> {returns}" if returns else ""
    return f"- {tool.name}({arguments}){arrow}: {tool.description}"


def _paper_block(tool: Tool, hints: dict[str, Any]) -> str:
    """A function block in the shape the paper's prompt describes (in our own wording)."""
    signature = str(hints if tool.extra.get("form") != "names" else list(hints))
    signature = signature.replace("[", "").replace("]", "")
    args = "".join(f"{name} (str)" for name in hints)
    returns = re.sub(r"[{}']", "", str(tool.extra.get("returns")))
    return (
        f"Function:\ndef {tool.name}({signature}):\n"
        f'    """\n    {tool.description}\n\n    Args:\n        {args}\n\n'
        f'    Returns:\n        {returns}\n    """\n'
    )


def _hint_text(hint: Any) -> str:
    if isinstance(hint, dict):
        inner = ", ".join(f"{k}: {_hint_text(v)}" for k, v in hint.items())
        return "{" + inner + "}"
    if isinstance(hint, list):
        return "[" + ", ".join(_hint_text(v) for v in hint) + "]"
    return str(hint)


def _returns_text(returns: Any) -> str:
    if isinstance(returns, dict):
        return ", ".join(returns)
    if isinstance(returns, list):
        return ", ".join(str(r) for r in returns)
    return str(returns) if returns else ""


def _type_and_description(hint: Any) -> tuple[str, str]:
    """JSON type and a description for one type hint of the data."""
    if hint is None:
        return "string", "type not given in the data"
    if isinstance(hint, dict):
        return "object", "an object: " + _hint_text(hint)
    if isinstance(hint, list):
        return "array", "a list: " + _hint_text(hint)
    text = str(hint)
    if text in {"string", "number", "object", "array", "boolean", "integer"}:
        return text, ""
    if "/" in text:
        return "string", f"one of {text}"
    return "string", text
