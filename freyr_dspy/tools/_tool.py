"""``Tool``: a typed, validated function the model may call.

A tool is built from a typed Python callable (its docstring gives the description and the
``Args:`` section the parameter descriptions), from a pydantic model of its arguments, from a
JSON schema (OpenAI tool dicts, MCP servers) or from a ``dspy.Tool``. Arguments of the first
two are validated by a pydantic model built from the parameters, so lax coercion ("5" -> 5 for
an int) comes for free; a JSON-schema tool keeps its whole schema, nested parts included, and
validates against it (``validation``). Nothing the model writes is ever evaluated as code.
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from freyr_dspy.errors import ConfigError, ToolError
from freyr_dspy.tools._coercion import match_choice, match_names
from freyr_dspy.tools._docstrings import doc_summary, parse_args_section
from freyr_dspy.tools._parameter import ToolParameter
from freyr_dspy.tools._schema import normalize_schema, parameters_from_schema
from freyr_dspy.tools._validation import ArgumentSchema

if TYPE_CHECKING:
    import dspy

__all__ = ["STATE_PARAMETER", "Tool", "ToolParameter"]

#: Name of the parameter through which a tool receives (a copy of) the domain state.
STATE_PARAMETER = "state"

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}


@dataclass(frozen=True)
class Tool:
    """A callable the program can run on the model's behalf.

    ``func`` may be None for spec-only tools (benchmarks that score the call, not its effect);
    executing one records the call and returns a neutral ok outcome. ``schema`` is the full
    JSON schema of the arguments of a tool built from one; it then drives validation.
    ``read_only`` marks a tool that only looks things up and changes nothing (MCP's
    ``readOnlyHint``): the program may call it on its own to find a value an action needs.
    """

    name: str
    description: str
    parameters: tuple[ToolParameter, ...] = ()
    library: str | None = None
    func: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    arguments_model: type[BaseModel] | None = field(default=None, compare=False, repr=False)
    takes_state: bool = False
    #: Free-form extra data of the domain (e.g. a benchmark's return-parameter spec).
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    schema: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    read_only: bool = False

    @property
    def summary(self) -> str:
        """The first sentence of the description, for compact catalogs."""
        first = self.description.strip().split("\n", 1)[0]
        match = re.match(r"(.+?[.!?])(\s|$)", first)
        return match.group(1) if match else first

    def validate_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check and coerce model-written arguments against the parameter types.

        Args:
            arguments: name -> value as parsed from the model output.

        Returns:
            The validated arguments, coerced to the declared types.

        Raises:
            ToolError: listing every unknown, missing or mistyped argument precisely.
        """
        if self.schema is not None:
            return self._argument_schema.check(self.name, arguments)
        known = {p.name for p in self.parameters}
        arguments = match_names(arguments, known)
        unknown = sorted(set(arguments) - known)
        problems = [
            f"unexpected argument {name!r} (expected: {', '.join(sorted(known)) or 'none'})"
            for name in unknown
        ]
        by_name = {p.name: p for p in self.parameters}
        given = {k: _match_choice(by_name[k], v) for k, v in arguments.items() if k in known}
        try:
            validated = self._validation_model.model_validate(given)
        except ValidationError as exc:
            problems.extend(_describe_errors(self, exc))
            validated = None
        if problems:
            raise ToolError(f"{self.name}: " + "; ".join(problems))
        assert validated is not None
        return {k: getattr(validated, k) for k in type(validated).model_fields}

    @functools.cached_property
    def _validation_model(self) -> type[BaseModel]:
        """The model that validates arguments; built once, as creating one costs ~1 ms."""
        return self.arguments_model or _arguments_model(self)

    @functools.cached_property
    def _argument_schema(self) -> ArgumentSchema:
        assert self.schema is not None
        return ArgumentSchema(self.schema)

    def json_schema(self) -> dict[str, Any]:
        """Return the OpenAI-style JSON schema of the arguments (``{"type": "object", ...}``).

        A tool built from a JSON schema gives back that schema whole (nested parts included).
        """
        if self.schema is not None:
            return copy.deepcopy(self.schema)
        properties: dict[str, Any] = {}
        for p in self.parameters:
            prop: dict[str, Any] = {"type": p.type}
            if p.description:
                prop["description"] = p.description
            if p.enum:
                prop["enum"] = list(p.enum)
            properties[p.name] = prop
        return {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.parameters if p.required],
        }

    def openai_schema(self) -> dict[str, Any]:
        """Return the ``{"type": "function", "function": {...}}`` shape of native tool APIs."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
            },
        }

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        library: str | None = None,
        read_only: bool = False,
    ) -> Tool:
        """Build a tool from a typed callable (``read_only``: it only looks things up).

        A parameter named ``state`` is not shown to the model: the program passes the domain
        state (a copy, committed only when the call succeeds).

        Raises:
            ConfigError: when a parameter has no type annotation.
        """
        doc = inspect.getdoc(func) or ""
        arg_docs = parse_args_section(doc)
        hints = typing.get_type_hints(func, include_extras=True)
        params: list[ToolParameter] = []
        fields: dict[str, Any] = {}
        takes_state = False
        for pname, param in inspect.signature(func).parameters.items():
            if pname == STATE_PARAMETER:
                takes_state = True
                continue
            if pname not in hints:
                raise ConfigError(f"tool {func.__name__}: parameter {pname!r} needs a type hint")
            required = param.default is inspect.Parameter.empty
            default = None if required else param.default
            arg_doc = arg_docs.get(pname, "")
            params.append(_parameter(pname, hints[pname], arg_doc, required, default))
            fields[pname] = (hints[pname], ... if required else default)
        model = create_model(f"{func.__name__}_arguments", __config__=_ARGS_CONFIG, **fields)
        return cls(
            name=name or func.__name__,
            description=description or doc_summary(doc),
            parameters=tuple(params),
            library=library,
            func=func,
            arguments_model=model,
            read_only=read_only,
            takes_state=takes_state,
        )

    @classmethod
    def from_model(
        cls,
        arguments: type[BaseModel],
        func: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        library: str | None = None,
    ) -> Tool:
        """Build a tool whose arguments are the fields of a pydantic model.

        ``func`` receives the validated fields as keyword arguments (plus ``state`` when it
        declares that parameter).
        """
        params = tuple(
            _parameter(
                fname,
                info.annotation,
                info.description or "",
                info.is_required(),
                None if info.is_required() else info.default,
            )
            for fname, info in arguments.model_fields.items()
        )
        takes_state = func is not None and STATE_PARAMETER in inspect.signature(func).parameters
        return cls(
            name=name or _snake(arguments.__name__),
            description=description or doc_summary(inspect.getdoc(arguments) or ""),
            parameters=params,
            library=library,
            func=func,
            arguments_model=arguments,
            takes_state=takes_state,
        )

    @classmethod
    def from_json_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any] | None,
        *,
        function: Callable[..., Any] | None = None,
        library: str | None = None,
        read_only: bool = False,
    ) -> Tool:
        """Build a tool from a JSON schema of its arguments (OpenAI ``parameters`` shape).

        The schema is kept whole (``json_schema()`` returns it) and validates every call,
        nested objects and arrays included. Habitual type names (``str``, ``float``, ``dict``,
        ``list``, ``tuple``, ``any``...) are read as their JSON Schema types.

        Args:
            name: the tool name, kept exactly (dots and dashes included).
            description: what the tool does, for the model.
            parameters: ``{"type": "object", "properties": {...}, "required": [...]}``, or
                None for a tool without arguments.
            function: called with the validated arguments as keywords (plus ``state`` when it
                declares that parameter); None makes a spec-only tool whose calls are recorded.
            library: the library the tool belongs to (for gating).
            read_only: the tool only looks things up (``Tool.read_only``).

        Raises:
            ConfigError: for an empty name, a function that is not callable or a bad schema.
        """
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"a tool name must be a non-empty string, got {name!r}")
        if description is not None and not isinstance(description, str):
            raise ConfigError(f"tool {name!r}: description must be a string")
        if function is not None and not callable(function):
            raise ConfigError(f"tool {name!r}: function must be callable, got {function!r}")
        schema = normalize_schema(name, parameters)
        takes_state = STATE_PARAMETER not in schema["properties"] and _declares_state(function)
        return cls(
            name=name,
            description=description or "",
            parameters=parameters_from_schema(schema),
            library=library,
            func=function,
            takes_state=takes_state,
            schema=schema,
            read_only=read_only,
        )

    @classmethod
    def from_dspy(cls, tool: dspy.Tool, *, library: str | None = None) -> Tool:
        """Build a tool from a ``dspy.Tool``: its name, description, args schema and function.

        Raises:
            ConfigError: when ``tool`` is not a ``dspy.Tool`` or its args are not a schema.
        """
        from freyr_dspy.tools._dspy_tool import dspy_parts

        name, description, schema, function = dspy_parts(tool)
        return cls.from_json_schema(name, description, schema, function=function, library=library)


def _declares_state(function: Callable[..., Any] | None) -> bool:
    if function is None:
        return False
    try:
        return STATE_PARAMETER in inspect.signature(function).parameters
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return False


# Small models often write 5 for a text field; "5" is what they meant.
_ARGS_CONFIG = ConfigDict(extra="ignore", arbitrary_types_allowed=True, coerce_numbers_to_str=True)


def _arguments_model(tool: Tool) -> type[BaseModel]:
    """Build a validation model for a spec-only tool from its JSON parameter types."""
    reverse = {v: k for k, v in _JSON_TYPES.items()}
    fields: dict[str, Any] = {}
    for p in tool.parameters:
        annotation: Any = reverse.get(p.type, Any)
        fields[p.name] = (annotation, ... if p.required else p.default)
    return create_model(f"{tool.name}_arguments", __config__=_ARGS_CONFIG, **fields)


def _match_choice(param: ToolParameter, value: Any) -> Any:
    """Map a written choice onto the declared one it spells ("2" -> 2, "Open" -> "open")."""
    return match_choice(value, param.enum) if param.enum else value


def _parameter(
    name: str, annotation: Any, description: str, required: bool, default: Any
) -> ToolParameter:
    """Describe one parameter from its Python annotation."""
    base, extra_desc = _unwrap_annotated(_strip_optional(annotation))
    enum: tuple[Any, ...] = ()
    origin = typing.get_origin(base)
    if origin is typing.Literal:
        enum = typing.get_args(base)
        json_type = _JSON_TYPES.get(type(enum[0]), "string")
    elif origin in (list, tuple, set):
        json_type = "array"
    elif origin is dict or base is dict:
        json_type = "object"
    else:
        json_type = _JSON_TYPES.get(base, "object" if _is_model(base) else "string")
    return ToolParameter(name, json_type, description or extra_desc, required, default, enum)


def _strip_optional(annotation: Any) -> Any:
    """Return ``X`` for ``X | None``; the model is shown the type it should write."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _unwrap_annotated(annotation: Any) -> tuple[Any, str]:
    """Return the bare type and a description found in ``Annotated[...]`` metadata."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        for item in meta:
            if isinstance(item, str):
                return base, item
            if isinstance(item, FieldInfo) and item.description:
                return base, item.description
        return base, ""
    return annotation, ""


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _describe_errors(tool: Tool, exc: ValidationError) -> list[str]:
    """Turn pydantic errors into precise, model-actionable messages."""
    types = {p.name: p for p in tool.parameters}
    messages = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "?"
        param = types.get(name)
        expected = "a value"
        if param is not None:
            expected = param.type + (f" ({param.description})" if param.description else "")
        if error["type"] == "missing":
            messages.append(f"missing required argument {name!r}: {expected}")
        else:
            got = error.get("input")
            messages.append(f"argument {name!r} expects {expected}, got {got!r}: {error['msg']}")
    return messages


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
