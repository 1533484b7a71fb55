"""Strategy ``native``: the model's own function calling - the baseline of every comparison.

One role, ``native``, sees the request, the state and every tool's JSON schema, and answers
with tool calls through the backend's native tool API (DSPy native function calling:
litellm ``tools=``, Ollama's tools API, or llama.cpp's tool-aware chat handler for the
embedded model). The calls are executed; when any fails, the errors go back to the model as
tool-result messages and it tries again, with the same budget as FREYR (``max_retries``
further rounds). Once a round succeeds (or the budget is spent) one last call without tools
asks for the reply to the user. A model that answers in text instead of calling a tool
ends the turn with that text as the reply.

A model or backend without native tool calling raises ``ToolUnsupportedError`` up front -
never a silent text-mode fallback, which would measure something else. The strategy is
generic over any toolbox, so other benchmarks reuse it as their structured baseline.
"""

from __future__ import annotations

import re
from typing import Any

import dspy

from freyr_dspy.errors import ToolUnsupportedError, exception_chain
from freyr_dspy.prompting import (
    Contract,
    FreyrChatAdapter,
    LeanAdapter,
    valid_strings,
    valid_unicode,
)
from freyr_dspy.roles import Role, register_role
from freyr_dspy.schemas import CallRecord, Failure, Outcome, Result
from freyr_dspy.strategies import register_strategy
from freyr_dspy.strategies._base import StrategyModule
from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._run import ModelFailure, Run, lm_of
from freyr_dspy.tools import Tool, inline_refs

ROLE = "native"
#: A JSON object naming a function with its arguments: a call the backend could not read.
_CALL_SHAPE = re.compile(r'"name"\s*:\s*"[^"]+"\s*,\s*"(arguments|parameters|args)"\s*:')


class NativeToolsSignature(dspy.Signature):
    """Carry out the user's latest message by calling the application's tools.

    Call every tool the request needs, with arguments that follow each tool's schema and
    values taken from the message and the current state. When a tool result reports an
    error, call that tool again with corrected arguments. When no tool is needed, or the
    work is done, answer the user briefly in `response`.
    """

    conversation: str | None = dspy.InputField(desc="earlier turns of the dialogue, oldest first")
    message: str | None = dspy.InputField(desc="the user's latest message")
    state: str | None = dspy.InputField(desc="the current state of the application")
    history: dspy.History = dspy.InputField(
        desc="the tool calls already made for this message, with their results"
    )
    tools: list[dspy.Tool] = dspy.InputField(desc="the tools that can be called")
    calls: dspy.ToolCalls = dspy.OutputField(desc="the tool calls to make now")
    response: str = dspy.OutputField(desc="the answer to the user when no tool call is needed")


class NativeToolCaller(Role):
    """Call tools through the model's native function-calling API."""

    signature = NativeToolsSignature

    def forward(self, contract: Contract | None = None, **inputs: Any) -> dspy.Prediction:
        """Predict with native function calling switched on in the active adapter."""
        with dspy.context(adapter=native_adapter(dspy.settings.adapter)):
            prediction = super().forward(contract, **inputs)
        if not prediction.parsed_ok and not _attempted_call(prediction.response):
            prediction["parsed_ok"] = True  # plain text is this role's reply format
        return prediction

    def parse_raw(self, text: str) -> dict[str, Any]:
        """A reply the adapter could not parse is plain text: the reply, with no call."""
        return {"calls": None, "response": text}

    def clean(self, outputs: dict[str, Any]) -> dict[str, Any]:
        """Normalise the calls to a (possibly empty) ``ToolCalls``."""
        calls = outputs.get("calls")
        if not isinstance(calls, dspy.ToolCalls):
            calls = dspy.ToolCalls(tool_calls=[])
        return {
            "calls": _valid_calls(calls),
            "response": str(outputs.get("response") or "").strip(),
        }


def _attempted_call(text: str) -> bool:
    """Whether a reply that is not a parsed tool call still looks like an attempt at one."""
    return "<tool_call>" in text or bool(_CALL_SHAPE.search(text))


def _valid_calls(calls: dspy.ToolCalls) -> dspy.ToolCalls:
    """Return the calls with valid Unicode names and arguments.

    They go back to the model in the history, and DSPy sends no text with lone surrogates (a
    model's JSON escape of half an emoji decodes to one).
    """
    return dspy.ToolCalls(
        tool_calls=[
            call.model_copy(
                update={"name": valid_unicode(call.name), "args": valid_strings(call.args, {})}
            )
            for call in calls.tool_calls
        ]
    )


class NativeToolsAdapter(LeanAdapter):
    """The lean adapter for native tool calling: tool calls first, a plain-text reply otherwise.

    The tools go through the backend's tool API (the model's own chat template); the prompt
    holds only the instructions and the inputs, as with every lean role, so ``native`` is
    measured with no more prompt than it needs. DSPy's JSON format would ask for a JSON object
    with the reply field, and that talks a small model out of calling tools
    (Qwen2.5-Coder answered ``{"response": ...}`` every time); here the model is asked for tool
    calls, or else a plain-text reply, which ``NativeToolCaller.parse_raw`` reads as the reply.
    After the tool results the conversation ends with them, and the model continues it.
    """

    def __init__(self) -> None:
        super().__init__(use_native_function_calling=True)

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        """The instructions, and how to answer: tool calls, or a plain-text reply."""
        return (
            f"{signature.instructions.strip()}\n\nCall the tools the message needs through the "
            "tool-calling format. When no tool call is needed, or the work is done, reply to "
            "the user in plain text: that text is your `response`."
        )

    def _prepare_response_format(self, lm: Any, lm_kwargs: Any, signature: Any) -> None:
        # NOTE: no JSON-schema output format: it would forbid the tool calls themselves.
        return None


def native_adapter(adapter: dspy.Adapter | None) -> dspy.Adapter:
    """The active adapter with native function calling on (ChatAdapter has it off)."""
    if isinstance(adapter, NativeToolsAdapter):
        return adapter
    if isinstance(adapter, dspy.JSONAdapter):
        return NativeToolsAdapter()
    if adapter is not None and adapter.use_native_function_calling:
        return adapter
    return FreyrChatAdapter(use_native_function_calling=True)


def as_dspy_tool(tool: Tool) -> dspy.Tool:
    """Describe a freyr tool to DSPy with exactly its JSON schema (never executed by DSPy)."""
    schema = tool.json_schema()
    # NOTE: DSPy gets the properties alone, so local $refs ($defs of MCP/pydantic tools) would
    # point nowhere: inline them first.
    properties = inline_refs(schema["properties"], schema)
    args = {}
    for name, spec in properties.items():
        arg = dict(spec)
        if name not in schema["required"]:
            arg["default"] = next(p.default for p in tool.parameters if p.name == name)
        args[name] = arg
    return dspy.Tool(_not_executed, name=tool.name, desc=tool.description, args=args)


def _not_executed(**kwargs: Any) -> None:
    """Placeholder: the toolbox executes calls, so state changes stay safe."""


def check_tool_support(module: Role) -> None:
    """Refuse a model whose backend has no native tool calling.

    Raises:
        ToolUnsupportedError: naming the model and what to use instead.
    """
    lm = lm_of(module)
    if lm is not None and not lm.supports_function_calling:
        raise ToolUnsupportedError(
            "the model has no native tool calling (according to its backend); use a strategy "
            "that works with any model, such as freyr or prompted",
            role=ROLE,
            model=getattr(lm, "model", None),
        )


def run_native(run: Run, role: Role, policy: CallPolicy) -> Result:
    """Run one request with native tool calls and error feedback (see module docstring).

    ``policy``: its ``max_retries`` rounds of calls after the first, its grounding.
    """
    check_tool_support(role)
    tools = [as_dspy_tool(t) for t in run.toolbox]
    inputs: dict[str, Any] = {
        "conversation": run.conversation,
        "message": run.message,
        "state": run.state_text(),
    }
    history: list[dict[str, Any]] = []
    intents: list[str] = []
    failed: list[str] = []
    for _round in range(1 + policy.max_retries):
        prediction = _call(run, role, inputs, history, tools)
        calls = prediction.calls.tool_calls
        if not calls:  # the model answered in text: its reply ends the turn
            return run.result(prediction.response, intents, _failure(failed))
        intents = run.ledger.plan(intents or [call.name for call in calls])
        results, failed = execute_calls(run, calls, len(history), policy)
        history.append({**inputs, "calls": results})
        inputs = {}  # later rounds continue the conversation held in the history
        if not failed:
            break
    if run.ending != "reply":
        return run.result("", intents, _failure(failed))
    reply = _call(run, role, {}, history, []).response
    return run.result(reply, intents, _failure(failed))


def _failure(failed: list[str]) -> Failure | None:
    """The failure of a turn whose last round of calls still had errors."""
    if not failed:
        return None
    return Failure(
        kind="retries", detail=f"retries exhausted for {', '.join(dict.fromkeys(failed))}"
    )


def _call(
    run: Run,
    role: Role,
    inputs: dict[str, Any],
    history: list[dict[str, Any]],
    tools: list[dspy.Tool],
) -> dspy.Prediction:
    try:
        return run.call(role, history=dspy.History(messages=list(history)), tools=tools, **inputs)
    except ModelFailure as exc:
        unsupported = _cause(exc, ToolUnsupportedError)
        if unsupported is not None:  # a capability the backend lacks: say so, do not score it
            raise unsupported from None
        raise


def _cause(exc: BaseException, kind: type[ToolUnsupportedError]) -> ToolUnsupportedError | None:
    """The first exception of type ``kind`` in the cause chain of ``exc``."""
    for raised in exception_chain(exc):
        if isinstance(raised, kind):
            return raised
    return None


def execute_calls(
    run: Run, calls: list[Any], round_index: int, policy: CallPolicy
) -> tuple[dspy.ToolCalls, list[str]]:
    """Execute the model's calls in order, grounded as ``policy`` says.

    Returns:
        The calls with their results attached (for the history), and the failed tool names.
    """
    tools = run.tools(policy)
    values, errors, named = [], [], []
    for i, call in enumerate(calls):
        arguments, dropped = tools.grounded(call.name, dict(call.args or {}))
        outcome = tools.execute(call.name, arguments)
        run.ledger.add_call(_record(call.name, arguments, outcome, dropped))
        values.append(outcome.render())
        errors.append(not outcome.ok)
        named.append(call.model_copy(update={"id": call.id or f"call_{round_index}_{i}"}))
    tool_calls = dspy.ToolCalls(tool_calls=named)
    results = dspy.ToolCallResults.from_tool_calls_and_values(tool_calls, values, errors)
    failed = [call.name for call, error in zip(calls, errors, strict=True) if error]
    return tool_calls.model_copy(update={"tool_call_results": results}), failed


def _record(
    tool: str, arguments: dict[str, Any], outcome: Outcome, dropped: list[str]
) -> CallRecord:
    return CallRecord(
        tool=tool,
        arguments=arguments,
        outcome=outcome,
        attempts=1,
        errors=[] if outcome.ok else [outcome.message],
        dropped=dropped,
    )


class Native(StrategyModule):
    """The model's own function calling (see the module docstring)."""

    native: Role

    name = "native"
    description = "the model's own function calling with error feedback (baseline)"

    def __init__(self) -> None:
        super().__init__((ROLE,))

    def run(self, run: Run) -> Result:
        """Call tools natively, feed errors back, then reply."""
        return run_native(run, self.native, self.calling)


register_role(ROLE, NativeToolCaller)
register_strategy(Native)

__all__ = ["NativeToolsAdapter", "NativeToolsSignature", "as_dspy_tool"]
