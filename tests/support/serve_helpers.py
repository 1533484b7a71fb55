"""Helpers of the serve tests: tools, a fake that knows them, and a server in a thread."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.serve import ServedProgram, ServedPrograms, ServeOptions, create_app
from freyr_dspy.serve import serving_in_thread as _serving_in_thread
from freyr_dspy.strategies import make_strategy
from freyr_dspy.testing import Answer, FakeCall, FunctionLM
from freyr_dspy.tools import Toolbox

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current temperature for a location.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City and country."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "IANA zone name."}},
            "required": ["timezone"],
        },
    },
}
TOOLS = [WEATHER, CLOCK]
ARGUMENTS = {"get_weather": {"location": "Paris"}, "get_time": {"timezone": "Europe/Paris"}}
ASK_WEATHER = [{"role": "user", "content": "What is the weather like in Paris today?"}]
CHAT_REPLY = "Hello! I can tell you the weather and the time anywhere."


def answer(call: FakeCall) -> Answer:
    """A model that knows these two tools: the role decides, the message picks."""
    message = call.inputs.get("message", "")
    if call.role == "intent":
        forced = "conversation" not in call.inputs.get("tools", "")  # required: no way out
        if "weather and the time" in message:
            return {"intents": ["get_weather", "get_time"]}
        if "weather" in message:
            return {"intents": ["get_weather"]}
        return {"intents": ["get_time" if forced else "conversation"]}
    if call.role == "parameters":
        tool = "get_weather" if "get_weather" in call.inputs.get("tool", "") else "get_time"
        return {"arguments": ARGUMENTS[tool]}
    if call.role == "summary":
        return {"reply": f"Summary: {call.inputs.get('outcomes', '')}"}
    if call.role == "chat":
        return {"reply": CHAT_REPLY}
    return None  # an unscripted role is a test bug (FakeLMError)


def make_program(
    fn: Callable[[FakeCall], Answer | None] = answer,
    strategy: str = "freyr",
    *,
    between_pieces: Callable[[], None] | None = None,
    structured_output: bool = False,
) -> tuple[FreyrProgram, FunctionLM]:
    """A program for the request's own tools, every role played by ``fn``.

    ``between_pieces`` holds a streamed answer halfway (``FakeEngine``); ``structured_output``
    makes the fake claim it keeps to a ``response_format``.
    """
    engine = FunctionLM(fn, between_pieces=between_pieces, structured_output=structured_output)
    settings = {"confirm": False} if strategy == "freyr" else {}
    program = FreyrProgram(toolbox=Toolbox([]), strategy=make_strategy(strategy, **settings))
    program.set_lm(dspy.LM("fake/serve", engine=engine, cache=False, temperature=0.0))
    return program, engine


def slow(seconds: float) -> Callable[[FakeCall], Answer | None]:
    """``answer``, after a pause on every model call."""

    def delayed(call: FakeCall) -> Answer | None:
        time.sleep(seconds)
        return answer(call)

    return delayed


@contextmanager
def serving(*programs: ServedProgram, fallback: bool = False, **options: Any) -> Iterator[str]:
    """Serve ``programs`` on a free port; yield the ``/v1`` base URL."""
    app = create_app(ServedPrograms(programs, fallback=fallback), ServeOptions(**options))
    with _serving_in_thread(app) as base:
        yield base
