r"""JSON schema -> llama.cpp grammar (GBNF), only ever a grammar llama.cpp accepts.

llama-cpp-python's converter is used with the fixes llama.cpp's own converter has, and more
whitespace. Its output is then checked by llama.cpp's grammar parser, which needs no model:
llama-cpp-python would hand a grammar the parser refuses to the sampler chain as a null
sampler. A schema whose regex ``pattern``s the converter mistranslates (``\d``, ``\.``,
``\w`` become escapes GBNF does not have) is tried again without them; a schema it cannot
translate at all (``not``, remote ``$ref``s) gets no grammar.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

from freyr_dspy.tools import map_subschemas

__all__ = ["schema_grammar", "without_patterns"]

logger = logging.getLogger(__name__)

#: NOTE: llama-cpp-python's converter allows at most one space between tokens, but DSPy writes
#: few-shot demos as indented JSON; a model imitating them was then pushed into `[ ]`
#: (compiled programs answered empty lists). Newlines and indentation are allowed here.
_SPACE_RULE = r'space ::= | " " | "\n" [ \t]{0,20}'
#: One line (``LlamaCppEngine(compact_json=True)``): a small model indents its JSON by habit,
#: and the line breaks and indentation cost about a third of a parameters answer's tokens (34 vs
#: 25 for a three-argument call on Qwen 1.5B), each a full decoding step. Held to one line, the
#: 1.5B chose worse on our suite (docs/results/default-program.md), so it is not the default.
_COMPACT_SPACE_RULE = r'space ::= | " "'
#: NOTE: llama-cpp-python's string character is ``[^"\\]``, which lets a raw newline or tab into
#: a string: invalid JSON (a sampled SmolLM2 wrote one). llama.cpp's own converter excludes the
#: control characters, as JSON does; they are still written escaped (``\n``).
_CHAR_RULE = (
    r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" '
    r"[0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"
)
#: Keywords that do not constrain a value: a schema of only these accepts any JSON value.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})


@functools.lru_cache(maxsize=128)
def schema_grammar(schema: str, *, compact: bool = False) -> str | None:
    """Return a GBNF grammar for the JSON schema ``schema`` (JSON text), or None.

    Args:
        schema: the JSON schema, as JSON text (the cache key).
        compact: JSON on one line (a space at most between tokens); else line breaks and
            indentation are allowed too, as in indented few-shot demos.

    Returns:
        A grammar llama.cpp's parser accepts: the whole schema's, else the schema's without
        its regex patterns, else None (use plain JSON mode).
    """
    first = json.loads(schema)
    candidates = [first]
    if (relaxed := without_patterns(first)) != first:
        candidates.append(relaxed)
    for candidate in candidates:
        try:
            gbnf = _convert(candidate, _COMPACT_SPACE_RULE if compact else _SPACE_RULE)
        except (AssertionError, ValueError, KeyError, TypeError, RecursionError) as exc:
            logger.debug("llama-cpp-python cannot convert this JSON schema: %s", exc)
            continue
        if _llama_cpp_parses(gbnf):
            return gbnf
        logger.debug("llama.cpp refuses the grammar of this JSON schema")
    return None


def _convert(schema: dict[str, Any], space_rule: str) -> str:
    """Convert like llama-cpp-python, with three fixes.

    NOTE: llama-cpp-python's converter puts no ``space`` after an enum or const value: then no
    newline may follow a name in an array, and a model writing indented JSON like DSPy's demos
    is pushed to ``,`` - one more item - instead. It does not escape backslashes in literals: a
    name or key with a quote gave a grammar llama.cpp refuses. And it reads a schema with no
    constraint (``{}``) as "an object", where JSON Schema means any value: a parameter of any
    type then took only objects.
    """
    from llama_cpp.llama_grammar import PRIMITIVE_RULES, RESERVED_NAMES, SchemaConverter

    class Converter(SchemaConverter):  # type: ignore[misc]
        def visit(self, schema: Any, name: str) -> str:
            if isinstance(schema, dict) and not set(schema) - _ANNOTATIONS:
                rule_name = name + "-" if name in RESERVED_NAMES else name or "root"
                return str(
                    self._add_rule(
                        rule_name, self._add_primitive("value", PRIMITIVE_RULES["value"])
                    )
                )
            return str(super().visit(schema, name))

        def _generate_constant_rule(self, value: Any) -> str:
            return f"{super()._generate_constant_rule(value)} space"

        def _format_literal(self, literal: str) -> str:
            return str(super()._format_literal(literal.replace("\\", "\\\\")))

    converter = Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(schema, "stdin"), "")
    gbnf = re.sub(r"^space ::= .*$", lambda _: space_rule, converter.format_grammar(), flags=re.M)
    return re.sub(r"^char ::= .*$", lambda _: _CHAR_RULE, gbnf, flags=re.M)


def _llama_cpp_parses(gbnf: str) -> bool:
    """Ask llama.cpp's grammar parser (a null vocabulary: no model needed) about ``gbnf``."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(None, gbnf.encode(), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def without_patterns(schema: Any) -> Any:
    """Return a copy of ``schema`` without regex ``pattern``s (properties named so are kept)."""
    if not isinstance(schema, dict):
        return schema
    node = {k: v for k, v in schema.items() if not (k == "pattern" and isinstance(v, str))}
    return map_subschemas(node, without_patterns)
