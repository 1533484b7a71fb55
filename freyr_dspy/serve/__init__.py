"""``freyr serve``: freyr programs behind OpenAI's Chat Completions protocol.

Any OpenAI client (the SDKs, LangChain, litellm, editors) gets tool calling from a small
model through a (compiled) program: the request's ``tools`` become the program's toolbox for
that request, spec-only (the client executes the calls), and once the results come back the
summary role writes the reply. docs/serve.md is the full reference.

Modules: ``protocol`` (the request/response shapes), ``conversation`` (messages -> the
program's inputs), ``translate`` (tools, tool_choice, results -> choices), ``answer`` (running
the program for one request), ``sampling``, ``structured`` (``response_format``), ``context``
(the context-size check), ``job`` (one request end to end), ``programs`` (what is served, by
name), ``pool`` (a program's copies for requests at once), ``queue`` (admission),
``streaming`` (SSE chunks), ``live`` (what streams while the program runs), ``reply_text`` and
``reply_guard`` (the reply's words out of a role's JSON answer, and which may go out yet),
``errors``, ``app`` (the FastAPI app) and ``server`` (uvicorn).
"""

from __future__ import annotations

from freyr_dspy.serve._app import ServeOptions, create_app
from freyr_dspy.serve._programs import ServedProgram, ServedPrograms
from freyr_dspy.serve._server import run_server, serving_in_thread

__all__ = [
    "ServeOptions",
    "ServedProgram",
    "ServedPrograms",
    "create_app",
    "run_server",
    "serving_in_thread",
]
