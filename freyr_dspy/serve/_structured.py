"""``response_format``: a reply in words held to JSON, by the backend's grammar, or refused.

``{"type": "json_object"}`` asks for any JSON object, ``{"type": "json_schema", "json_schema":
{"name", "schema", "strict"}}`` for one valid against the schema. The roles that write the reply
(``chat``, ``summary``) then answer under a contract (``freyr_dspy.prompting._contracts``): their
``reply`` is the schema's value, and a backend that constrains its output gets the schema as
its ``response_format`` - a JSON-schema grammar on the embedded llama.cpp engine, ``format``
on Ollama, structured outputs where litellm knows the provider has them. A program whose
reply roles cannot be held to it (a model asked in the prompt only, llama.cpp refusing the
schema's grammar, the chat adapter) is refused with a 400 naming the role and the model:
never asked, then ignored. Tool calls are unaffected; the reply is checked before it is sent,
and one that is not the schema's (a summary rewritten because it invented a result) is a 502.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema

from freyr_dspy.backends import runs_in_process, schema_grammar
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import JsonSchema, enforces_schema, output_schema, with_contract
from freyr_dspy.roles import Role
from freyr_dspy.serve._errors import ApiError, bad_request

__all__ = ["ReplyFormat", "check_reply", "reply_format_of", "served_format"]

PARAM = "response_format"


@dataclass(frozen=True)
class ReplyFormat:
    """The JSON a reply in words must be: any object, or a value of ``schema``."""

    schema: JsonSchema
    name: str = "json_object"


def reply_format_of(response_format: dict[str, Any] | None) -> ReplyFormat | None:
    """Read a request's ``response_format`` (None: the reply is text).

    Raises:
        ApiError: 400 for a type this server does not know, or a malformed schema.
    """
    kind = (response_format or {}).get("type", "text")
    if response_format is None or kind == "text":
        return None
    if kind == "json_object":
        return ReplyFormat({"type": "object"})
    if kind != "json_schema":
        raise bad_request(
            f"response_format type {kind!r} is not supported (text, json_object, json_schema)",
            param=f"{PARAM}.type",
        )
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise bad_request(
            "response_format.json_schema.schema: expected the JSON schema of the reply",
            param=f"{PARAM}.json_schema.schema",
        )
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise bad_request(
            f"response_format.json_schema.schema is not a valid JSON schema: {exc.message}",
            param=f"{PARAM}.json_schema.schema",
        ) from exc
    return ReplyFormat(schema, str(spec.get("name") or "reply"))  # type: ignore[union-attr]


def served_format(program: FreyrProgram, reply: ReplyFormat) -> None:
    """Refuse a format the program's reply roles cannot be held to.

    Raises:
        ApiError: 400 naming the role and its model, and why.
    """
    if program.adapter == "chat":
        raise _unsupported("the program's chat adapter can only ask for JSON in the prompt")
    roles = _reply_roles(program)
    if not roles:
        raise _unsupported(
            f"strategy {program.strategy_name!r} writes its reply in the same model call as "
            "its tool calls, with no role of its own to hold to a schema; serve freyr, nlt "
            "or gated"
        )
    for role in roles:
        for predictor in role.predictors():
            lm = predictor.lm
            if lm is None:
                continue
            if not enforces_schema(lm):
                raise _unsupported(
                    f"the {role.role_id} role's model {lm.model} cannot be held to a JSON "
                    "schema (it would only be asked in the prompt); serve a model whose backend "
                    "constrains its output (embedded, gguf:, Ollama, a provider with structured "
                    "outputs)"
                )
            contracted = with_contract(predictor.signature, {"reply": reply.schema})
            grammar = json.dumps(output_schema(contracted))
            if runs_in_process(lm.model) and schema_grammar(grammar) is None:
                raise _unsupported(
                    f"llama.cpp cannot turn this schema into a grammar for {lm.model} "
                    "(unsupported keywords such as 'not' or remote '$ref's)"
                )


def check_reply(content: str, reply: ReplyFormat) -> None:
    """Make sure a reply is the JSON ``reply`` asks for before it is sent.

    Raises:
        ApiError: 502 ``structured_output_invalid`` when it is not.
    """
    try:
        jsonschema.validate(json.loads(content), reply.schema)
    except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.message
        raise ApiError(
            502,
            f"the reply does not follow response_format ({reply.name}): {detail}",
            type="server_error",
            code="structured_output_invalid",
        ) from exc


def _reply_roles(program: FreyrProgram) -> list[Role]:
    """The roles of ``program`` that write the reply the client reads."""
    roles = (program.role(name) for name in program.role_names)
    return [role for role in roles if role.writes_reply]


def _unsupported(why: str) -> ApiError:
    return bad_request(f"response_format is not supported here: {why}", param=PARAM)
