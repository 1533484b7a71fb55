"""How a refused or failed request becomes an OpenAI error answer: status, type, param, code.

Every error is one ``ApiError`` raised where the problem is found and rendered once by the
app, so each answer has OpenAI's ``{"error": {message, type, param, code}}`` shape and one
clear line. The status says whose fault it is: 4xx the client's request, 502 the model, 503
a full queue (retry later), 504 the time limit.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from freyr_dspy.errors import FreyrError
from freyr_dspy.schemas import Failure
from freyr_dspy.serve._protocol import ErrorBody, ErrorResponse

__all__ = [
    "ApiError",
    "bad_request",
    "context_exceeded",
    "invalid_body",
    "model_failed",
    "queue_full",
    "timed_out",
    "unauthorized",
    "unknown_model",
]


# NOTE: defined here rather than in freyr_dspy/errors.py: it is an HTTP answer of this
# package, raised and caught only inside it, never by library callers.
class ApiError(FreyrError):
    """A request answered with an OpenAI error object instead of a completion."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = ErrorBody(message=message, type=type, param=param, code=code)
        self.headers = headers or {}

    def response_body(self) -> dict[str, Any]:
        """The JSON body: ``{"error": {...}}``."""
        return ErrorResponse(error=self.body).model_dump()


def bad_request(message: str, *, param: str | None = None, code: str | None = None) -> ApiError:
    """400: the request is malformed or asks for something this server refuses."""
    return ApiError(400, message, param=param, code=code)


def invalid_body(exc: ValidationError) -> ApiError:
    """400 for a body that does not fit the protocol, naming the first field at fault."""
    error = exc.errors(include_url=False)[0]
    param = _param(error.get("loc", ()))
    detail = error.get("msg", "invalid value")
    return bad_request(f"{param or 'body'}: {detail}", param=param or None)


def _param(loc: tuple[Any, ...]) -> str:
    """``("messages", 2, "tool", "tool_call_id")`` -> ``messages[2].tool_call_id``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part not in ("system", "user", "assistant", "tool", "developer"):
            # the discriminated union adds the role as a path step; the client never wrote it
            text += f".{part}" if text else str(part)
    return text


def unknown_model(name: str, known: list[str]) -> ApiError:
    """404 ``model_not_found``, listing what this server serves."""
    return ApiError(
        404,
        f"model {name!r} is not served here; GET /v1/models lists: {', '.join(known)}",
        param="model",
        code="model_not_found",
    )


def unauthorized() -> ApiError:
    """401: no or wrong ``Authorization: Bearer`` key."""
    return ApiError(
        401,
        "missing or wrong API key: send the server's key as 'Authorization: Bearer KEY'",
        code="invalid_api_key",
        headers={"WWW-Authenticate": "Bearer"},
    )


def queue_full(waiting: int, retry_after: int) -> ApiError:
    """503 with ``Retry-After``: every place in the queue is taken."""
    return ApiError(
        503,
        f"the server is busy ({waiting} requests waiting, the most it queues); "
        f"retry in {retry_after} s",
        type="server_error",
        code="queue_full",
        headers={"Retry-After": str(retry_after)},
    )


def context_exceeded(estimated: int, window: int, *, param: str = "messages") -> ApiError:
    """400 ``context_length_exceeded``: the request does not fit the model's context."""
    return bad_request(
        f"this model's context is {window} tokens, and the request needs about {estimated} "
        "(messages and tool definitions, plus the program's own prompt); shorten the "
        "messages or send fewer tools. Nothing was truncated.",
        param=param,
        code="context_length_exceeded",
    )


def model_failed(failure: Failure) -> ApiError:
    """502 for a failed model, 504 for a timed-out one, 400 for a prompt over its context."""
    if failure.kind == "context":
        return bad_request(
            f"the prompt did not fit the model's context: {failure.detail}; nothing was truncated",
            param="messages",
            code="context_length_exceeded",
        )
    status = 504 if failure.kind == "timeout" else 502
    return ApiError(
        status,
        f"{failure.kind}: {failure.detail}",
        type="server_error",
        code=f"freyr_{failure.kind}",
    )


def timed_out(seconds: float) -> ApiError:
    """504: the program did not answer within the server's time limit."""
    return ApiError(
        504,
        f"the program did not answer within {seconds:g} s (freyr serve --timeout)",
        type="server_error",
        code="timeout",
    )
