"""``parameters``: the arguments of one tool call (FREYR's LLM_parameters).

Per call, ``parameters_contract`` types the arguments as exactly the called tool's JSON schema
(``Tool.json_schema()``: required fields, types, enums, nested objects and arrays, defaults
where the tool declares them), plus the give-up opt-out once an attempt has failed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import dspy

from freyr_dspy.prompting import Contract, JsonSchema, choose_from, forbid_values, parse_arguments
from freyr_dspy.roles._base import Role
from freyr_dspy.tools import Tool, inline_refs

__all__ = [
    "ParameterFiller",
    "ParametersSignature",
    "give_up_feedback",
    "gives_up",
    "one_call_note",
    "parameters_contract",
    "several_calls_contract",
    "several_calls_note",
]

#: What a model writes instead of arguments when no change of them can fix the last error
#: (FREYR's ``OpError`` opt-out). It is offered only in the feedback of a failed attempt.
GIVE_UP = "give_up"
_GIVE_UP_WORD = re.compile(r"\b(give_up|OpError)\b", re.IGNORECASE)


class ParametersSignature(dspy.Signature):
    """Write the arguments for one call of the given tool.

    Use the parameter names and types of the tool specification exactly. Take values from
    the message and the current state. If feedback about a failed attempt is given, fix the
    arguments so the same error does not happen again.
    """

    conversation: str = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str = dspy.InputField(desc="the user's latest message")
    state: str = dspy.InputField(desc="the current state of the application")
    tool: str = dspy.InputField(desc="the tool to call: its purpose and every parameter's spec")
    feedback: str = dspy.InputField(desc="the error of the previous attempt, or 'none'")
    arguments: dict[str, Any] = dspy.OutputField(desc="parameter name -> value for this call")


class ParameterFiller(Role):
    """Fill in a tool's arguments from the request and the state."""

    signature = ParametersSignature
    # One call's arguments fit in ~80 tokens; a small model that rambles on stops at the cap.
    default_max_tokens = 160

    def parse_raw(self, text: str) -> dict[str, Any]:
        """Read arguments from a (broken) JSON object or ``- name: value`` lines."""
        return {"arguments": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Accept a dict, a JSON string or bullet lines; a bare give-up word is kept as such."""
        raw = outputs.get("arguments")
        arguments = parse_arguments(raw)
        if not arguments and isinstance(raw, str) and _GIVE_UP_WORD.search(raw):
            arguments = {GIVE_UP: raw.strip()}
        return {"arguments": arguments}


def parameters_contract(
    tool: Tool,
    *,
    may_give_up: bool = False,
    forbidden: Mapping[str, Sequence[Any]] | None = None,
    choices: Mapping[str, Sequence[str]] | None = None,
) -> Contract:
    """The arguments of one call of ``tool``: its JSON schema, with ``$ref``s inlined.

    ``may_give_up`` (after a failed attempt, when the feedback offers it) also allows the
    opt-out object ``{"give_up": "<why>"}``. ``forbidden`` (parameter -> values an earlier
    error blamed) is kept out of the schema where a grammar can enforce it (``forbid_values``);
    ``choices`` (parameter -> the values an error listed for it) become its enum
    (``choose_from``), less any forbidden ones.
    """
    schema = tool.json_schema()
    # NOTE: the schema is nested under "arguments", so its "#/$defs/..." refs would dangle.
    offered = choose_from(inline_refs(schema, schema), choices or {})
    arguments: JsonSchema = forbid_values(offered, forbidden or {})
    if may_give_up and GIVE_UP not in arguments.get("properties", {}):
        opt_out = {
            "type": "object",
            "properties": {GIVE_UP: {"type": "string"}},
            "required": [GIVE_UP],
            "additionalProperties": False,
        }
        arguments = {"anyOf": [arguments, opt_out]}
    return {"arguments": arguments}


def several_calls_contract(tool: Tool, most: int) -> Contract:
    """The arguments of up to ``most`` calls of ``tool`` at once: ``{"calls": [args, ...]}``.

    Still one ``arguments`` object, so the signature (and compiled demos) stay as they are.
    """
    one = parameters_contract(tool)["arguments"]
    calls = {"type": "array", "items": one, "minItems": 1, "maxItems": most}
    return {
        "arguments": {
            "type": "object",
            "properties": {"calls": calls},
            "required": ["calls"],
            "additionalProperties": False,
        }
    }


def several_calls_note(tool: str, most: int, asks: Sequence[str] = ()) -> str:
    """What follows the tool's spec when the plan calls it more than once.

    ``asks``: the words of each thing asked of the tool, listed in order when known.
    """
    if asks:
        listed = " ".join(
            f"{n}. {json.dumps(words, ensure_ascii=False)}" for n, words in enumerate(asks, 1)
        )
        return (
            f"The message asks {len(asks)} things of {tool}: {listed}. Write "
            '{"calls": [...]} with one arguments object per thing asked, in this order, '
            "each with the values of its own words."
        )
    return (
        f"The message may ask for several calls of {tool} (at most {most}): one for each "
        'thing it asks of the tool. Write {"calls": [...]} with one arguments object per '
        "call, each with the values of its own request."
    )


def one_call_note(words: str) -> str:
    """What follows the tool's spec when the message asks several things and this is one."""
    return (
        "The message asks several things; this call is for the part that asks: "
        f"{json.dumps(words, ensure_ascii=False)}. Take its values from there."
    )


def give_up_feedback(
    tool: str, arguments: dict[str, Any] | None, error: str, note: str = ""
) -> str:
    """The feedback of a failed attempt, offering the opt-out when retrying cannot help.

    ``arguments`` None leaves them out (values the model must not see again); ``note``, a line
    of advice, follows the error.
    """
    attempt = f"Calling {tool}" + ("" if arguments is None else f" with {arguments}")
    advice = f"{note}\n" if note else ""
    return (
        f"{attempt} failed: {error}\n{advice}"
        f'If other arguments can fix this, write them. If no arguments can, write {{"{GIVE_UP}": '
        '"<why>"} instead.'
    )


def gives_up(arguments: dict[str, Any], tool_parameters: set[str]) -> str | None:
    """The model's reason when ``arguments`` is the opt-out rather than a real call."""
    if GIVE_UP in arguments and GIVE_UP not in tool_parameters:
        return str(arguments[GIVE_UP]).strip() or "no reason given"
    return None
