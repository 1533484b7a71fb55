"""The CallNavi roles: one-step JSON, router, per-call parameters and the backward planners.

Each role is a DSPy module over a typed signature (so it can be compiled), registered at
import under its id. Inputs are kept few and named differently per role: the fake LMs and
the compiled artifacts tell roles apart by their fields.

* ``single`` - the paper's baseline: the whole call list in one answer.
* ``router`` - the ordered API names (2-step generation, step 1).
* ``call_parameters`` - the arguments of one call, seeing only the routed APIs' specs.
* ``final_call``, ``missing_inputs``, ``supporting_call`` - backward thinking: the API that
  completes the request, which of its inputs must come from another call, and which API
  returns such an input.

The roles that name APIs or parameters get them typed per call by the catalog they see
(``single_call_contract``, ``router_contract``, ``final_call_contract``,
``missing_inputs_contract``, ``supporting_call_contract``). ``call_parameters`` (whose values
may be the ``"$$$"`` placeholder of any type) stays as declared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import dspy

from freyr_dspy.prompting import (
    Contract,
    JsonSchema,
    load_json,
    name_schema,
    names_schema,
    parse_arguments,
    parse_text,
    split_items,
    strip_fences,
)
from freyr_dspy.roles import Role, register_role
from freyr_dspy.tools import Tool

__all__ = [
    "final_call_contract",
    "missing_inputs_contract",
    "read_call_list",
    "router_contract",
    "single_call_contract",
    "supporting_call_contract",
]


class SingleCallSignature(dspy.Signature):
    """Answer the question by planning API calls from the list of APIs.

    Choose the APIs needed and put them in the order they must run (repeat a name to call an
    API twice). For each call write one object mapping that API's parameter names to their
    values. Write "$$$" as the value of a parameter whose value comes from the result of an
    earlier call, or that the question does not state.
    """

    question: str = dspy.InputField(desc="what the user asks for")
    catalog: str = dspy.InputField(desc="the available APIs with their parameters")
    API: list[str] = dspy.OutputField(desc="API names in call order")
    parameters: list[dict[str, Any]] = dspy.OutputField(
        desc="one object per call, aligned with API: parameter name -> value"
    )


class SingleCaller(Role):
    """Write the whole call list in one step (the paper's full-generation prompt)."""

    signature = SingleCallSignature

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read ``{"API": [...], "parameters": [...]}`` from broken JSON or prose."""
        return read_call_list(text)

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the names as a list and the parameters as written (shape is scored)."""
        params = outputs.get("parameters")
        return {
            "API": [str(a) for a in split_items(outputs.get("API"))],
            "parameters": params if isinstance(params, list | dict) else [],
        }


def read_call_list(text: str) -> dict[str, Any]:
    """Tolerantly read a call-list object; keys are matched case-insensitively."""
    value = load_json(strip_fences(text))
    if not isinstance(value, dict):
        return {"API": [], "parameters": []}
    keys = {str(k).lower(): k for k in value}
    api_key = keys.get("api") or keys.get("apis")
    params_key = keys.get("parameters") or keys.get("params") or keys.get("arguments")
    return {
        "API": value.get(api_key, []) if api_key else [],
        "parameters": value.get(params_key, []) if params_key else [],
    }


class RouterSignature(dspy.Signature):
    """Pick the APIs that answer the question, in the order they must be called.

    Use only names from the list. When a call needs a value that another API returns, put
    that other API first. Repeat a name to call the same API twice.
    """

    question: str = dspy.InputField(desc="what the user asks for")
    catalog: str = dspy.InputField(desc="the available APIs: name and what each does")
    apis: list[str] = dspy.OutputField(desc="API names in call order")


class Router(Role):
    """Route a question to an ordered list of APIs (2-step generation, step 1)."""

    signature = RouterSignature

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read names from a JSON list, a comma list or bullets."""
        return {"apis": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Split a list written into one item."""
        return {"apis": split_items(outputs.get("apis"))}


class CallParametersSignature(dspy.Signature):
    """Write the arguments of one API call of the plan.

    Use exactly the parameter names of this call's API. Take the values from the question.
    Write "$$$" as the value of a parameter whose value comes from the result of an earlier
    call, or that the question does not state.
    """

    question: str = dspy.InputField(desc="what the user asks for")
    plan: str = dspy.InputField(desc="the planned calls in order, with their APIs' specs")
    call: str = dspy.InputField(desc="the call to write now: its number and API spec")
    arguments: dict[str, Any] = dspy.OutputField(desc="parameter name -> value for this call")


class CallParameterFiller(Role):
    """Fill the arguments of one planned call (2-step generation, step 2)."""

    signature = CallParametersSignature

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read arguments from broken JSON or ``name: value`` lines."""
        return {"arguments": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Accept a dict, a JSON string or bullet lines."""
        return {"arguments": parse_arguments(outputs.get("arguments"))}


class FinalCallSignature(dspy.Signature):
    """Name the one API whose call completes what the user finally wants.

    Other calls that prepare its inputs are planned later; name only the last one.
    """

    question: str = dspy.InputField(desc="what the user asks for")
    catalog: str = dspy.InputField(desc="the available APIs: name and what each does")
    final_api: str = dspy.OutputField(desc="the name of the API that completes the request")


class FinalCallPicker(Role):
    """Start backward planning from the call that completes the request."""

    signature = FinalCallSignature

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the first name written."""
        names = split_items(parse_text(outputs.get("final_api")))
        return {"final_api": names[0] if names else ""}


class MissingInputsSignature(dspy.Signature):
    """List the parameters of this call whose values the question does not give.

    A value is missing when it must first be obtained from another API (an ID, a balance,
    a reference number). Answer an empty list when the question gives every value.
    """

    question: str = dspy.InputField(desc="what the user asks for")
    call: str = dspy.InputField(desc="the API call: its spec and the arguments written so far")
    missing: list[str] = dspy.OutputField(desc="names of parameters whose values are missing")


class MissingInputsFinder(Role):
    """Find the inputs of a call that another call must provide."""

    signature = MissingInputsSignature

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read names from a list, commas or bullets."""
        return {"missing": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Split a list written into one item."""
        return {"missing": split_items(outputs.get("missing"))}


class SupportingCallSignature(dspy.Signature):
    """Name the API whose result provides the needed value, or `none` if no API returns it."""

    question: str = dspy.InputField(desc="what the user asks for")
    needed: str = dspy.InputField(desc="the missing value and the call that needs it")
    candidates: str = dspy.InputField(desc="APIs that may return it: name, returns, purpose")
    supporting_api: str = dspy.OutputField(desc="the API name to call first, or none")


class SupportingCallPicker(Role):
    """Pick the API that provides a missing input (backward thinking, one step back)."""

    signature = SupportingCallSignature

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Keep the first name written."""
        names = split_items(parse_text(outputs.get("supporting_api")))
        return {"supporting_api": names[0] if names else ""}


def single_call_contract(tools: Sequence[Tool], max_calls: int) -> Contract:
    """The one-step answer: at most ``max_calls`` calls, each object one API's parameters.

    Each parameter object must be one of the catalog's parameter sets, every parameter
    written (``"$$$"`` stands for a value that comes later), any value type. Without this the
    1.5B wrote ``{}`` for every call until its token budget ran out.
    """
    shapes = {json.dumps(_parameter_object(tool), sort_keys=True) for tool in tools}
    return {
        "API": names_schema([tool.name for tool in tools], max_items=max_calls),
        "parameters": {
            "type": "array",
            "items": {"anyOf": [json.loads(shape) for shape in sorted(shapes)]},
            "maxItems": max_calls,
        },
    }


def _parameter_object(tool: Tool) -> JsonSchema:
    """One API's arguments: its parameters only, each value of any type."""
    return {
        "type": "object",
        "properties": {p.name: {} for p in tool.parameters},
        "required": [p.name for p in tool.parameters if p.required],
        "additionalProperties": False,
    }


def router_contract(apis: Sequence[str], max_calls: int) -> Contract:
    """The router's answer: names of ``apis`` in call order, at most ``max_calls``."""
    return {"apis": names_schema(apis, max_items=max_calls)}


def final_call_contract(apis: Sequence[str]) -> Contract:
    """The final call: one name of ``apis``."""
    return {"final_api": name_schema(apis)}


def missing_inputs_contract(parameters: Sequence[str]) -> Contract:
    """The missing inputs of a call: names of its ``parameters``, each at most once."""
    return {"missing": names_schema(parameters, max_items=len(set(parameters)))}


def supporting_call_contract(candidates: Sequence[str], none: str) -> Contract:
    """The supporting call: one of the ``candidates`` offered, or ``none``."""
    return {"supporting_api": name_schema([*candidates, none])}


CALLNAVI_ROLES: dict[str, type[Role]] = {
    "single": SingleCaller,
    "router": Router,
    "call_parameters": CallParameterFiller,
    "final_call": FinalCallPicker,
    "missing_inputs": MissingInputsFinder,
    "supporting_call": SupportingCallPicker,
}

for _name, _module in CALLNAVI_ROLES.items():
    register_role(_name, _module)
