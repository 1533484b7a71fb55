"""One request, from its body to its completion: read, checked, run, answered.

Everything a request can get wrong is found here, before it takes a place in the queue: a
body that is not JSON or not the protocol, a message list the protocol forbids, a malformed
tool, a ``tool_choice`` naming no tool, tools other than a compiled program's, a request over
the model's context. ``run_job`` is the part that runs in the worker thread.
"""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from dataclasses import dataclass

from pydantic import ValidationError

from freyr_dspy.schemas import CallRecord, Outcome, Result
from freyr_dspy.serve._context import check_fits
from freyr_dspy.serve._conversation import Turn, read_turn
from freyr_dspy.serve._errors import bad_request, invalid_body
from freyr_dspy.serve._live import LiveAnswer
from freyr_dspy.serve._programs import ServedProgram
from freyr_dspy.serve._protocol import ChatCompletion, ChatRequest, new_completion_id
from freyr_dspy.serve._sampling import overrides_of
from freyr_dspy.serve._structured import ReplyFormat, check_reply, reply_format_of, served_format
from freyr_dspy.serve._translate import (
    ToolPlan,
    choice_of,
    is_waiting_id,
    plan_of,
    toolbox_of,
    usage_of,
    waiting_tools,
)
from freyr_dspy.strategies import CallOverrides, Request
from freyr_dspy.tools import Toolbox

__all__ = ["Job", "completion_of", "parse_request", "prepare", "program_request", "run_job"]


@dataclass(frozen=True)
class Job:
    """A checked request, ready for the worker: the program and the request it answers."""

    served: ServedProgram
    request: Request
    #: What ``tool_choice`` and ``parallel_tool_calls`` ask of the answer sent back.
    plan: ToolPlan
    #: The JSON a reply in words must be (``response_format``); None: text.
    reply_format: ReplyFormat | None = None

    @property
    def toolbox(self) -> Toolbox | None:
        """The request's tools (None without)."""
        return self.request.toolbox


def parse_request(raw: bytes) -> ChatRequest:
    """Read a request body.

    Raises:
        ApiError: 400 for a body that is not a JSON object of the protocol.
    """
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise bad_request(f"the body is not valid JSON: {exc.msg} ({where})") from exc
    except UnicodeDecodeError as exc:
        raise bad_request("the body is not UTF-8 text") from exc
    if not isinstance(data, dict):
        raise bad_request(f"the body must be a JSON object, got {type(data).__name__}")
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        raise invalid_body(exc) from exc


def prepare(request: ChatRequest, served: ServedProgram) -> Job:
    """Check a request against the program that will answer it.

    Raises:
        ApiError: 400 for anything the request gets wrong (see the module docstring).
    """
    reply = reply_format_of(request.response_format)
    turn = read_turn(request.messages, again=reply is not None)
    toolbox = toolbox_of(request.tools)
    plan = plan_of(request, toolbox)
    served.check_tools(toolbox)
    check_fits(turn, request.tools, served.context_tokens)
    if reply is not None:
        served_format(served.program, reply)
    return Job(
        served, program_request(turn, toolbox, plan, overrides_of(request, reply)), plan, reply
    )


def program_request(
    turn: Turn, toolbox: Toolbox | None, plan: ToolPlan, overrides: CallOverrides
) -> Request:
    """The request the program answers: the messages read, the tools, ``tool_choice``."""
    answered = tuple(
        CallRecord(tool=r.name, arguments=r.arguments, outcome=Outcome(ok=True, message=r.content))
        for r in turn.results
    )
    return Request(
        message=turn.message,
        conversation=turn.conversation,
        toolbox=toolbox,
        tool_choice=plan.mode,
        function=plan.function,
        since=turn.since,
        answered=answered,
        rounds=turn.rounds,
        # Calls sent while later ones waited say so in their ids (the server keeps no state).
        replan=any(is_waiting_id(r.call_id) for r in turn.results),
        waited=tuple(dict.fromkeys(t for r in turn.results for t in waiting_tools(r.call_id))),
        overrides=overrides,
    )


def run_job(job: Job, live: LiveAnswer | None = None) -> Result:
    """Answer a job's request with its program, in a worker thread.

    ``live`` is the streamed answer that hears of its words and calls as they come.
    """
    with live.installed() if live else nullcontext():
        return job.served.program.answer(job.request)


def completion_of(model: str, result: Result, job: Job, fingerprint: str) -> ChatCompletion:
    """The answer to a job, named by the ``model`` the request asked for.

    Raises:
        ApiError: 502 when the program failed, could not honour ``tool_choice``, or wrote a
            reply that is not the JSON ``response_format`` asks for.
    """
    choice = choice_of(result, job.toolbox, job.plan)
    if job.reply_format is not None and choice.message.content is not None:
        check_reply(choice.message.content, job.reply_format)
    return ChatCompletion(
        id=new_completion_id(),
        created=int(time.time()),
        model=model,
        system_fingerprint=fingerprint,
        choices=[choice],
        usage=usage_of(result.usage),
    )
