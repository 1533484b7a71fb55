"""Validation of model-written arguments against a tool's JSON schema (nested parts included).

The arguments are coerced first (see ``coercion``), then checked with ``jsonschema``. Every
problem becomes one short clause naming the argument by its path (``items[0].qty``), what was
expected and what was given, so a small model can fix exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators

from freyr_dspy.errors import ToolError
from freyr_dspy.tools._coercion import coerce
from freyr_dspy.tools._schema import argument_path, describe_type, inline_refs

__all__ = ["ArgumentSchema"]

_SHOWN = 60  # longest given value quoted back in a message
_MESSAGE = 120  # longest validator message passed on


class ArgumentSchema:
    """A tool's argument schema, ready to validate calls (built once per tool)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.inlined = inline_refs(schema, schema)
        cls = validators.validator_for(schema, default=Draft202012Validator)
        self._validator = cls(schema)

    @property
    def known(self) -> list[str]:
        """Top-level argument names, in schema order."""
        return list(self.schema.get("properties", {}))

    def check(self, tool_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Coerce and validate arguments.

        Args:
            tool_name: the tool, named first in the error message.
            arguments: name -> value as parsed from the model output.

        Returns:
            The coerced arguments (only those given; defaults are the tool's business).

        Raises:
            ToolError: one line listing every unexpected, missing or invalid argument.
        """
        coerced = coerce(dict(arguments), self.inlined)
        problems = []
        # NOTE: unlike JSON Schema, an absent additionalProperties forbids unknown arguments:
        # a tool cannot take arguments it never declared, and the model should hear so.
        if self.schema.get("additionalProperties", False) is False:
            unknown = sorted(k for k in coerced if k not in self.known)
            problems = [_unexpected(name, self.known) for name in unknown]
            coerced = {k: v for k, v in coerced.items() if k not in unknown}
        for error in self._validator.iter_errors(coerced):
            problems.extend(self._describe(error))
        if problems:
            raise ToolError(f"{tool_name}: " + "; ".join(dict.fromkeys(problems)))
        return coerced

    def _describe(self, error: ValidationError) -> list[str]:
        where = list(error.absolute_path)
        properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        if error.validator == "required" and isinstance(error.instance, dict):
            return [
                f"missing required argument {argument_path([*where, name])!r}: "
                + self._expected(properties.get(name))
                for name in error.validator_value
                if name not in error.instance
            ]
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            extra = [k for k in error.instance if k not in properties]
            return [_unexpected(argument_path([*where, k]), list(properties)) for k in extra]
        subject = f"argument {argument_path(where)!r}" if where else "the arguments"
        if error.validator in ("type", "anyOf", "oneOf", "enum", "const"):
            return [
                f"{subject} expects {self._expected(error.schema)}, got {_shown(error.instance)}"
            ]
        return [f"{subject} is invalid: {_short(error.message, _MESSAGE)}"]

    def _expected(self, schema: Any) -> str:
        schema = inline_refs(schema, self.schema) if isinstance(schema, dict) else {}
        if isinstance(schema.get("enum"), list):
            text = "one of " + ", ".join(repr(v) for v in schema["enum"])
        elif "const" in schema:
            text = repr(schema["const"])
        else:
            text = describe_type(schema)
        description = schema.get("description")
        return f"{text} ({description})" if description else text


def _unexpected(name: str, known: list[str]) -> str:
    return f"unexpected argument {name!r} (expected: {', '.join(sorted(known)) or 'none'})"


def _shown(value: Any) -> str:
    return _short(repr(value), _SHOWN)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
