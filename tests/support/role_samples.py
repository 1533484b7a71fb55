"""Small valid values of any role field: what a well-behaved model would write."""

from __future__ import annotations

import types
import typing
from typing import Any

import dspy
from pydantic import BaseModel

from freyr_dspy.roles import load_roles
from freyr_dspy.testing import FunctionLM


def sample(annotation: Any) -> Any:
    """A small valid value of ``annotation`` (what a well-behaved model would write)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is dspy.History:  # native tool calling (strategy ``native``)
        return dspy.History(messages=[])
    if annotation is dspy.Tool:
        return dspy.Tool(lambda: None, name="sample", desc="a sample tool")
    if annotation is Any or annotation is str:
        return "sample"
    if annotation is bool:
        return True
    if annotation in (int, float):
        return annotation(1)
    if origin is typing.Literal:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        return sample(next(a for a in args if a is not type(None)))
    if origin in (list, tuple, set):
        return [sample(args[0] if args else str)]
    if origin is dict or annotation is dict:
        return {"key": sample(args[1] if args else str)}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: sample(f.annotation) for name, f in annotation.model_fields.items()}
    raise NotImplementedError(f"extend sample() for {annotation!r}")


def sample_inputs(signature: type[dspy.Signature]) -> dict[str, Any]:
    return {name: sample(f.annotation) for name, f in signature.input_fields.items()}


def sample_outputs(signature: type[dspy.Signature]) -> dict[str, Any]:
    return {name: sample(f.annotation) for name, f in signature.output_fields.items()}


def well_formed_lm() -> FunctionLM:
    """A fake that answers every role with well-typed sample outputs (right format, no skill)."""
    roles = load_roles()
    return FunctionLM(lambda call: sample_outputs(roles[call.role].signature))
