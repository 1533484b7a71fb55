"""The FastAPI app of ``freyr serve``: OpenAI's chat completions over freyr programs.

Routes: ``POST /v1/chat/completions``, ``GET /v1/models`` and ``GET /health`` (open without
the API key, for load balancers and scripts). Each completion carries the server's timing in
three headers: ``x-freyr-queue-ms`` (waiting for the worker), ``x-freyr-program-ms`` (the
program's run) and ``x-freyr-overhead-ms`` (the rest of the handler: reading, checking and
answering the request), so a client can tell the server's own cost from the model's time.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from freyr_dspy.errors import one_line
from freyr_dspy.schemas import Result
from freyr_dspy.serve._errors import ApiError, unauthorized
from freyr_dspy.serve._job import Job, completion_of, parse_request, prepare, run_job
from freyr_dspy.serve._live import LiveAnswer
from freyr_dspy.serve._programs import ServedPrograms
from freyr_dspy.serve._protocol import ChatCompletion, ChatRequest
from freyr_dspy.serve._queue import Admission, ClientGone, Timed
from freyr_dspy.serve._streaming import first_delta, live_events, new_head, sse_events

__all__ = ["ServeOptions", "create_app"]

logger = logging.getLogger(__name__)

#: The status logged for a client that left while waiting (nginx's "client closed request").
CLIENT_CLOSED = 499
#: The largest request body read: far above any context window, far below the server's memory.
MAX_BODY_BYTES = 16 * 2**20


@dataclass(frozen=True)
class ServeOptions:
    """How the server admits requests.

    Args:
        max_queue: requests that may wait while others run; more are refused with 503.
        timeout: seconds a program may run before the request is answered with 504.
        api_key: the key clients must send as ``Authorization: Bearer KEY``; None: no key.
        concurrency: requests run at once (more than 1 only for remote models, see
            ``ServedPrograms.check_concurrency``); they share each program, which no request
            changes.
    """

    max_queue: int = 16
    timeout: float = 600.0
    api_key: str | None = None
    concurrency: int = 1


def create_app(programs: ServedPrograms, options: ServeOptions | None = None) -> FastAPI:
    """Build the app serving ``programs``.

    The app's ``state.admission`` is its queue (``running``/``waiting`` counts).

    Raises:
        ConfigError: for ``concurrency`` > 1 with a model running in this process.
    """
    options = options or ServeOptions()
    programs.check_concurrency(options.concurrency)
    admission = Admission(
        options.max_queue, timeout=options.timeout, concurrency=options.concurrency
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        admission.close()

    from freyr_dspy import __version__

    app = FastAPI(title="freyr serve", version=__version__, lifespan=lifespan, docs_url=None)
    app.state.admission = admission
    fingerprint = f"freyr-{__version__}"

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.response_body(), status_code=exc.status, headers=exc.headers)

    @app.get("/health")
    async def health() -> dict[str, object]:
        return {
            "status": "ok",
            "models": programs.names,
            "running": admission.running,
            "waiting": admission.waiting,
            "max_queue": admission.max_queue,
            "concurrency": admission.concurrency,
        }

    @app.get("/v1/models")
    async def models(request: Request) -> JSONResponse:
        _authorize(request, options.api_key)
        return JSONResponse(programs.model_list().model_dump())

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        started = time.perf_counter()
        _authorize(request, options.api_key)
        body = parse_request(await _read_body(request))
        job = prepare(body, programs.pick(body.model))
        live = _live_answer(job, body)

        def work() -> Result:
            return run_job(job, live)

        running = asyncio.ensure_future(admission.run(work, lambda: _client_left(request)))
        running.add_done_callback(_retrieved)  # a streamed answer's client may be gone
        if live is not None and (first := await first_delta(live, running)) is not None:

            async def final() -> ChatCompletion:
                timed = await _finished(running, body)
                return completion_of(body.model, timed.value, job, fingerprint)

            head = new_head(body.model, fingerprint)
            events = live_events(head, first, live, running, final, include_usage=_usage(body))
            return StreamingResponse(events, media_type="text/event-stream")
        try:
            timed = await _finished(running, body)
        except ClientGone:
            logger.info("client left while waiting: %s", body.model)
            return Response(status_code=CLIENT_CLOSED)
        completion = completion_of(body.model, timed.value, job, fingerprint)
        finish = completion.choices[0].finish_reason
        logger.info("%s: %s in %.0f ms", body.model, finish, 1000 * timed.run_seconds)
        return _respond(body, completion, timed, started)

    return app


async def _finished(running: asyncio.Future[Timed[Result]], body: ChatRequest) -> Timed[Result]:
    """The program's run, its unexpected errors made one line for the client (500).

    Raises:
        ApiError: the run's own (503, 504), or 500 for a bug or a misconfigured program.
        ClientGone: when the client left while waiting.
    """
    try:
        return await running
    except (ClientGone, ApiError):
        raise
    except Exception as exc:  # a bug or a misconfigured program: one line to the client
        logger.exception("request for %s failed", body.model)
        message = one_line(exc, typed=True)
        raise ApiError(500, message, type="server_error", code="internal") from exc


def _live_answer(job: Job, body: ChatRequest) -> LiveAnswer | None:
    """The streamed answer of a ``stream: true`` request (None otherwise)."""
    if not body.stream:
        return None
    loop = asyncio.get_running_loop()
    words = job.reply_format is None  # a structured reply is checked whole before it goes
    return LiveAnswer(loop, job.request, job.plan, words=words)


def _retrieved(running: asyncio.Future[Timed[Result]]) -> None:
    """Mark the run's error as seen: nobody awaits a run whose streaming client left."""
    if not running.cancelled():
        running.exception()


def _usage(body: ChatRequest) -> bool:
    """Whether the stream ends with a usage chunk (``stream_options.include_usage``)."""
    return body.stream_options is not None and body.stream_options.include_usage


def _respond(
    body: ChatRequest, completion: ChatCompletion, timed: Timed[Result], started: float
) -> Response:
    if not body.stream:
        response: Response = JSONResponse(completion.model_dump(mode="json"))
    else:
        events = sse_events(completion, include_usage=_usage(body))
        response = StreamingResponse(events, media_type="text/event-stream")
    own = time.perf_counter() - started - timed.queue_seconds - timed.run_seconds
    response.headers.update(
        {
            "x-freyr-queue-ms": f"{1000 * timed.queue_seconds:.2f}",
            "x-freyr-program-ms": f"{1000 * timed.run_seconds:.2f}",
            "x-freyr-overhead-ms": f"{1000 * own:.2f}",
        }
    )
    return response


async def _read_body(request: Request) -> bytes:
    """The request body, refused (413) past ``MAX_BODY_BYTES`` before it is all read."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(
                413,
                f"the body is larger than {MAX_BODY_BYTES // 2**20} MiB",
                code="request_too_large",
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def _client_left(request: Request) -> None:
    """Return once the client has disconnected (the body is read: nothing else can arrive).

    NOTE: a watcher awaiting the next ASGI message, rather than polling ``is_disconnected``:
    with dozens of requests waiting, polling each one every few milliseconds cost the event
    loop more than the requests themselves.
    """
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _authorize(request: Request, api_key: str | None) -> None:
    """Check ``Authorization: Bearer KEY`` in constant time (no key configured: open)."""
    if api_key is None:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = token.strip().encode()
    if scheme.lower() != "bearer" or not hmac.compare_digest(given, api_key.encode()):
        raise unauthorized()
