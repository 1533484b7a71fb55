"""The OpenAI Chat Completions shapes ``freyr serve`` reads and writes, as pydantic models.

Requests are read leniently where OpenAI is lenient (fields this server does not use are
accepted and ignored, see docs/serve.md) and strictly where a wrong value would change the
answer (message roles, ``tool_choice``, ``n``). Responses carry the fields the official
SDKs read; ``usage.freyr_roles`` is an extra field with each role's own usage.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AssistantMessage",
    "AssistantReply",
    "ChatCompletion",
    "ChatRequest",
    "Choice",
    "ErrorBody",
    "ErrorResponse",
    "FunctionCall",
    "Message",
    "ModelCard",
    "ModelList",
    "NamedToolChoice",
    "PromptTokensDetails",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "Usage",
    "UserMessage",
    "new_completion_id",
]

#: Text, or a list of content parts (only ``{"type": "text"}`` parts are understood).
Content = str | list[dict[str, Any]]

FinishReason = Literal["stop", "tool_calls", "length"]


class _Lenient(BaseModel):
    # NOTE: clients send fields this server has no use for (name, refusal, audio, ...);
    # refusing them would break SDK versions that add new ones.
    model_config = ConfigDict(extra="ignore")


class FunctionCall(_Lenient):
    """A function a tool call names, with its arguments as a JSON string."""

    name: str
    arguments: str


class ToolCall(_Lenient):
    """One call of a tool, as an assistant message carries it."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class SystemMessage(_Lenient):
    """Instructions from the application (``developer`` is the newer name)."""

    role: Literal["system", "developer"]
    content: Content


class UserMessage(_Lenient):
    """A message of the user."""

    role: Literal["user"]
    content: Content


class AssistantMessage(_Lenient):
    """An earlier answer: text, tool calls, or both."""

    role: Literal["assistant"]
    content: Content | None = None
    tool_calls: list[ToolCall] | None = None


class ToolMessage(_Lenient):
    """The result of one tool call, sent back by the client that executed it."""

    role: Literal["tool"]
    content: Content
    tool_call_id: str


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]


class _FunctionName(_Lenient):
    name: str


class NamedToolChoice(_Lenient):
    """``{"type": "function", "function": {"name": ...}}``: this tool must be called."""

    type: Literal["function"]
    function: _FunctionName


class StreamOptions(_Lenient):
    """``include_usage``: send a last chunk with the usage before ``[DONE]``."""

    include_usage: bool = False


class ChatRequest(_Lenient):
    """The body of ``POST /v1/chat/completions`` (the fields this server reads)."""

    model: str = Field(min_length=1)
    messages: list[Message] = Field(min_length=1)
    #: OpenAI tool dicts; checked by ``Toolbox.from_openai`` for a message naming the tool.
    tools: list[Any] | None = None
    tool_choice: Literal["auto", "none", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool = True
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    #: ``{"type": "text" | "json_object" | "json_schema", ...}``: read by ``serve.structured``.
    response_format: dict[str, Any] | None = None
    n: Literal[1] = 1
    #: The deprecated ``functions``/``function_call`` API: refused, not silently ignored.
    functions: list[Any] | None = None

    @property
    def reply_tokens(self) -> int | None:
        """The cap on the reply's tokens (``max_completion_tokens`` is the newer name)."""
        return self.max_completion_tokens or self.max_tokens


class AssistantReply(BaseModel):
    """The message of a choice: ``content`` or ``tool_calls`` (content is then null)."""

    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    """The one choice of a completion (``n`` is always 1)."""

    index: int = 0
    message: AssistantReply
    logprobs: None = None
    finish_reason: FinishReason


class PromptTokensDetails(BaseModel):
    """What the prompt tokens were: ``cached_tokens`` came from a prefix cache."""

    cached_tokens: int = 0


class Usage(BaseModel):
    """Tokens of every model call the request took, all roles together."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails = Field(default_factory=PromptTokensDetails)
    #: Role -> its own usage (lm_calls, input/output tokens, seconds, ...): freyr's extra.
    freyr_roles: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ChatCompletion(BaseModel):
    """The body of a non-streamed answer."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[Choice]
    usage: Usage


def new_completion_id() -> str:
    """A fresh completion id, ``chatcmpl-`` and 24 random hex digits."""
    return f"chatcmpl-{secrets.token_hex(12)}"


class ModelCard(BaseModel):
    """One entry of ``GET /v1/models``."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "freyr"
    #: What serves it: ``program compiled/x.json`` or ``strategy freyr``: freyr's extra.
    freyr_source: str = ""


class ModelList(BaseModel):
    """The body of ``GET /v1/models``."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorBody(BaseModel):
    """OpenAI's error object: a message, its type, the parameter at fault, a code."""

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    """``{"error": {...}}``, the body of every error answer."""

    error: ErrorBody
