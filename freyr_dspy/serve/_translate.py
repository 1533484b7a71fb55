"""Between the protocol and the program: tools -> toolbox, tool_choice -> plan, result -> choice.

A request's ``tools`` become a spec-only toolbox (the client executes the calls; nothing a
client sends is ever run here). ``tool_choice`` and ``parallel_tool_calls`` become a
``ToolPlan``. A program's ``Result`` becomes the one choice of the answer: ``tool_calls`` for
the calls the program made, with arguments valid against the tool's schema, else the reply.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from freyr_dspy.errors import ConfigError, ToolError
from freyr_dspy.schemas import CallRecord, Result, RoleUsage
from freyr_dspy.serve._errors import ApiError, bad_request, model_failed
from freyr_dspy.serve._protocol import (
    AssistantReply,
    ChatRequest,
    Choice,
    FunctionCall,
    NamedToolChoice,
    PromptTokensDetails,
    ToolCall,
    Usage,
)
from freyr_dspy.tools import Toolbox

__all__ = [
    "WAITING",
    "ToolPlan",
    "choice_of",
    "is_waiting_id",
    "plan_of",
    "tool_call",
    "toolbox_of",
    "usage_of",
    "waiting_tools",
]

#: The end of the ids of calls sent while other planned calls wait for their results: the
#: client sends the ids back with the results, so the next turn knows to plan again. The
#: waiting tools follow, each after a ``.`` (which OpenAI's function names never hold):
#: ``call_..._w.add_todo``, so the next turn makes them even where its plan leaves them out.
WAITING = "_w"

#: Distinct tool lists kept built: clients send the same tools with every request.
_TOOLBOX_CACHE = 64
#: OpenAI's rule for function names: clients and providers downstream refuse others.
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass(frozen=True)
class ToolPlan:
    """What ``tool_choice`` and ``parallel_tool_calls`` ask of the program."""

    #: ``auto``: the program decides; ``none``: reply in words; ``required``: call a tool;
    #: ``named``: call ``function``.
    mode: Literal["auto", "none", "required", "named"] = "auto"
    function: str | None = None
    parallel: bool = True


def toolbox_of(tools: list[Any] | None) -> Toolbox | None:
    """The spec-only toolbox of a request's ``tools`` (None without tools).

    Raises:
        ApiError: 400 for a malformed tool, naming it by position.
    """
    if not tools:
        return None
    for index, tool in enumerate(tools):
        _check_name(index, tool)
    try:
        # NOTE: not sort_keys: the order of a schema's properties is the order roles see.
        key = json.dumps(tools)
    except (TypeError, ValueError) as exc:  # pragma: no cover - the body was JSON already
        raise bad_request(f"tools: {exc}", param="tools") from exc
    return _cached_toolbox(key)


def _check_name(index: int, tool: Any) -> None:
    """Refuse a function name outside OpenAI's pattern (a malformed tool is left to the toolbox).

    Raises:
        ApiError: 400 naming the tool.
    """
    function = tool.get("function") if isinstance(tool, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if isinstance(name, str) and name and not TOOL_NAME.fullmatch(name):
        raise bad_request(
            f"tools[{index}].function.name: {name!r} is not a valid tool name (letters, digits, "
            "'_' and '-', 1 to 64 of them, as OpenAI requires)",
            param=f"tools[{index}].function.name",
            code="invalid_tool_name",
        )


@functools.lru_cache(maxsize=_TOOLBOX_CACHE)
def _cached_toolbox(key: str) -> Toolbox:
    # NOTE: cached by the tools' JSON: a toolbox holds no state of a request, and its tools
    # are spec-only (Toolbox.from_openai without functions), so requests may share it.
    # from_openai checks each schema too (jsonschema's meta-schema), naming the tool.
    try:
        return Toolbox.from_openai(json.loads(key))
    except ConfigError as exc:
        raise bad_request(f"tools: {exc}", param="tools") from exc


def plan_of(request: ChatRequest, toolbox: Toolbox | None) -> ToolPlan:
    """Read ``tool_choice`` against the request's tools.

    Raises:
        ApiError: 400 for ``required`` or a named tool without tools, or a name not among them.
    """
    if request.functions is not None:
        raise bad_request(
            "functions: the deprecated functions API is not supported; send tools instead",
            param="functions",
        )
    choice = request.tool_choice or "auto"
    parallel = request.parallel_tool_calls
    if isinstance(choice, NamedToolChoice):
        name = choice.function.name
        if toolbox is None or name not in toolbox.names:
            offered = ", ".join(toolbox.names) if toolbox is not None else "no tools"
            raise bad_request(
                f"tool_choice names {name!r}, which is not among the request's tools ({offered})",
                param="tool_choice",
            )
        return ToolPlan("named", name, parallel)
    if choice == "required" and toolbox is None:
        raise bad_request("tool_choice 'required' needs tools in the request", param="tool_choice")
    return ToolPlan(choice, None, parallel)


def choice_of(result: Result, toolbox: Toolbox | None, plan: ToolPlan) -> Choice:
    """The answer's choice: the calls made as ``tool_calls``, else the reply.

    Only calls whose arguments passed the tool's schema are sent (a call that failed every
    attempt is not); without ``parallel_tool_calls`` only the first one.

    Raises:
        ApiError: 502 when the program failed and has nothing to send (with the failure
            kind), or when ``tool_choice`` asked for a call and none could be made.
    """
    calls = [
        tool_call(c, toolbox, waiting=result.waiting)
        for c in result.calls
        if toolbox is not None and c.outcome.ok
    ]
    made = [c for c in calls if c is not None]
    if made:
        made = made if plan.parallel else made[:1]
        return Choice(
            message=AssistantReply(content=None, tool_calls=made), finish_reason="tool_calls"
        )
    if plan.mode in ("required", "named"):
        # NOTE: 422, not 5xx: the program decided no offered tool fits this request, which a
        # retry of the same request does not change (the openai SDK retries 5xx twice).
        why = f" ({result.failure.kind}: {result.failure.detail})" if result.failure else ""
        raise ApiError(
            422,
            f"tool_choice asked for a tool call, and the program made none: no offered tool "
            f"fits this request{why}",
            type="invalid_request_error",
            code="tool_choice_unsatisfied",
        )
    if not result.reply and result.failure is not None:
        raise model_failed(result.failure)
    return Choice(message=AssistantReply(content=result.reply), finish_reason="stop")


def tool_call(
    call: CallRecord, toolbox: Toolbox | None, *, waiting: Sequence[str] = ()
) -> ToolCall | None:
    """The protocol's form of one call; None when its arguments do not fit the schema.

    ``waiting``: the tools of the planned calls that wait for this call's results (the id
    names them).
    """
    tool = toolbox.resolve(call.tool) if toolbox is not None else None
    if tool is None:
        return None
    try:
        # NOTE: the record holds the model's arguments; validation coerces them ("5" -> 5)
        # to what the schema declares, which is what the client's function expects.
        arguments = tool.validate_arguments(call.arguments)
    except ToolError:
        return None
    text = json.dumps(arguments, ensure_ascii=False)
    call_id = new_call_id() + (WAITING + "".join(f".{name}" for name in waiting) if waiting else "")
    return ToolCall(id=call_id, function=FunctionCall(name=tool.name, arguments=text))


def new_call_id() -> str:
    """A fresh tool call id, ``call_`` and 24 random hex digits."""
    return f"call_{secrets.token_hex(12)}"


def is_waiting_id(call_id: str) -> bool:
    """Whether a call was sent while other planned calls waited for its result."""
    return call_id.startswith("call_") and call_id.partition(".")[0].endswith(WAITING)


def waiting_tools(call_id: str) -> list[str]:
    """The tools a waiting call's id names (``call_..._w.add_todo`` -> ``add_todo``)."""
    return call_id.split(".")[1:] if is_waiting_id(call_id) else []


def usage_of(usage: dict[str, RoleUsage]) -> Usage:
    """Sum every role's tokens; keep each role's own usage in ``freyr_roles``.

    ``prompt_tokens_details.cached_tokens`` are the prompt tokens a backend's prefix cache
    reused (the embedded engine's saved states; a provider's prompt cache).
    """
    prompt = sum(u.input_tokens for u in usage.values())
    completion = sum(u.output_tokens for u in usage.values())
    cached = sum(u.cached_input_tokens for u in usage.values())
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=cached),
        freyr_roles={role: u.model_dump() for role, u in usage.items()},
    )
