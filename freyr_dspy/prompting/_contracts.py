"""Catalog-typed role outputs: the exact JSON schema a role's answer must follow, per call.

A role's signature types its outputs loosely (``intents: list[str]``, ``arguments: dict[str,
Any]``) because what it may name - the tools of this request's catalog, the arguments of the
tool being called - is known only at call time. A *contract* maps output field names to that
call's JSON schema (``{"intents": {"type": "array", "items": {"enum": [...]}}}``).

It travels in a per-call signature (DSPy's ``Predict(..., signature=...)``) as one extra key of
the fields' ``json_schema_extra``. Annotations, instructions and demos stay the declared ones,
so parsing is unchanged, and the predictor's state, compiled artifacts and ``signatures/``
never see a contract. freyr's adapters honour it (``freyr_dspy.prompting._adapters``):

* a backend that constrains its output to a JSON schema (``enforces_schema``) gets it as
  ``response_format`` - a grammar on llama.cpp, ``format`` on Ollama, structured outputs on
  OpenAI - and the prompt stays exactly what it is without a contract;
* any other backend, and the chat adapter, get the schema in the prompt instead, as the
  field's ``Constraints:`` line (DSPy's own place for field constraints; see ``stated``).

Either way the role's tolerant parser reads the answer, so a server that ignores the schema,
or a model that names something outside the catalog anyway, is handled as before. DSPy's own
adapters ignore contracts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, cast

import dspy
import pydantic

from freyr_dspy.errors import ConfigError

__all__ = [
    "Contract",
    "JsonSchema",
    "contract_of",
    "enforces_schema",
    "is_strict",
    "json_text_fields",
    "name_schema",
    "names_schema",
    "output_schema",
    "pattern_literal",
    "response_format",
    "stated",
    "with_contract",
]

JsonSchema = dict[str, Any]
#: Output field name -> the JSON schema its value must follow in this call.
Contract = Mapping[str, JsonSchema]

_KEY = "freyr_contract"
#: Signatures kept per (signature, contract): a few per catalog and tool, bounded for optimizers
#: that create many short-lived signatures.
_CACHE_SIZE = 512
#: litellm prefixes whose servers turn a ``json_schema`` response_format into a grammar though
#: litellm's capability table does not know their local models: litellm passes it to Ollama as
#: ``format`` (both chat and completion routes).
_SCHEMA_PREFIXES = ("ollama_chat/", "ollama/")
#: Keywords OpenAI's strict structured outputs accept; any other keeps ``strict`` off.
_STRICT_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const"}
    | {"anyOf", "description", "title", "maxItems", "minItems", "pattern"}
)
#: A strict schema states what its value is: "any value" (``{}``) is not accepted.
_TYPED = frozenset({"type", "enum", "const", "anyOf"})


def names_schema(names: Iterable[str], *, max_items: int | None = None) -> JsonSchema:
    """An array of names taken from ``names`` (each name exactly as spelled there)."""
    schema: JsonSchema = {"type": "array", "items": name_schema(names)}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def name_schema(names: Iterable[str]) -> JsonSchema:
    """One name taken from ``names``; repeated names are listed once."""
    return {"type": "string", "enum": list(dict.fromkeys(names))}


def pattern_literal(text: str) -> str | None:
    r"""Return a regex matching exactly ``text``, or None when one cannot be written safely.

    NOTE: llama-cpp-python's pattern converter copies unknown escapes such as ``\.`` into the
    grammar, which llama.cpp then refuses; a dot is written ``[.]`` instead. ``^``, ``\``,
    quotes and control characters have no form every converter reads alike.
    """
    parts = []
    for char in text:
        if char.isalnum() or char in " _-:,;'@#%&=<>!~/":
            parts.append(char)
        elif char in "[](){}|*+?":
            parts.append("\\" + char)
        elif char in ".$":
            parts.append(f"[{char}]")
        else:
            return None
    return "".join(parts)


def with_contract(signature: type[dspy.Signature], contract: Contract) -> type[dspy.Signature]:
    """Return ``signature`` carrying ``contract`` (built once per signature and contract).

    Raises:
        ConfigError: when the contract names a field that is not an output of ``signature``.
    """
    unknown = [name for name in contract if name not in signature.output_fields]
    if unknown:
        outputs = ", ".join(signature.output_fields)
        raise ConfigError(f"contract for unknown output field(s) {unknown}; outputs: {outputs}")
    # NOTE: DSPy is untyped; its signature classes hash by identity.
    key = json.dumps(list(contract.items()), ensure_ascii=False)
    return _with_contract(cast(Hashable, signature), key)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _with_contract(signature: Any, contract: str) -> type[dspy.Signature]:
    for name, schema in json.loads(contract):
        signature = signature.with_updated_fields(name, **{_KEY: schema})
    return signature  # type: ignore[no-any-return]


def contract_of(signature: type[dspy.Signature]) -> dict[str, JsonSchema]:
    """The contract a signature carries (empty for a declared signature)."""
    return {
        name: field.json_schema_extra[_KEY]
        for name, field in signature.output_fields.items()
        if _KEY in (field.json_schema_extra or {})
    }


def json_text_fields(signature: type[dspy.Signature]) -> list[str]:
    """The text outputs a contract holds to a schema that is not a string's.

    Such a field's value is JSON (an object, a list, ...), and the role's text is the JSON of
    that value (a served reply under ``response_format``): it is read as JSON and kept as
    written, not tidied up as prose.
    """
    return [
        name
        for name, schema in contract_of(signature).items()
        if signature.output_fields[name].annotation is str and schema.get("type") != "string"
    ]


def stated(signature: type[dspy.Signature]) -> type[dspy.Signature]:
    """Return ``signature`` with its contract written into the prompt, for unconstrained output.

    Each contracted field gets the line ``Constraints: must adhere to the JSON schema: ...``
    under its description (DSPy renders a field's ``constraints`` there).
    """
    return _stated(cast(Hashable, signature))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _stated(signature: Any) -> type[dspy.Signature]:
    for name, schema in contract_of(signature).items():
        written = f"must adhere to the JSON schema: {json.dumps(schema, ensure_ascii=False)}"
        earlier = signature.output_fields[name].json_schema_extra.get("constraints")
        constraints = f"{earlier}; {written}" if earlier else written
        signature = signature.with_updated_fields(name, constraints=constraints)
    return signature


def output_schema(signature: type[dspy.Signature]) -> JsonSchema:
    """The JSON object the answer must be: contracted fields exactly, others by their type."""
    contract = contract_of(signature)
    properties = {
        name: contract.get(name) or pydantic.TypeAdapter(field.annotation).json_schema()
        for name, field in signature.output_fields.items()
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def response_format(signature: type[dspy.Signature]) -> dict[str, Any]:
    """The OpenAI ``json_schema`` response format of a contracted signature's answer.

    ``strict`` is on only when OpenAI's strict mode accepts the schema as it is (every object
    closed with all its properties required, known keywords only): strict mode would refuse a
    tool schema with optional arguments, and changing the schema would change the contract.
    """
    schema = output_schema(signature)
    return {
        "type": "json_schema",
        "json_schema": {"name": "outputs", "schema": schema, "strict": is_strict(schema)},
    }


def is_strict(schema: Any) -> bool:
    """Tell whether OpenAI's strict structured outputs accept ``schema`` unchanged."""
    if isinstance(schema, list):
        return all(is_strict(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if not _STRICT_KEYWORDS.issuperset(schema) or not _TYPED.intersection(schema):
        return False
    if schema.get("type") == "array" and "items" not in schema:
        return False
    if "properties" in schema or schema.get("type") == "object":
        properties = schema.get("properties", {})
        closed = schema.get("additionalProperties") is False
        if not closed or set(schema.get("required", [])) != set(properties):
            return False
        if not all(is_strict(sub) for sub in properties.values()):
            return False
    return all(is_strict(schema[key]) for key in ("items", "anyOf") if key in schema)


def enforces_schema(lm: dspy.BaseLM) -> bool:
    """Tell whether ``lm``'s backend constrains its output to a ``json_schema`` format.

    DSPy's own test (``response_format`` supported and ``supports_response_schema``), plus
    Ollama, whose local models litellm's table does not know.
    """
    if "response_format" not in lm.supported_params:
        return False
    return bool(lm.supports_response_schema) or str(lm.model).startswith(_SCHEMA_PREFIXES)
