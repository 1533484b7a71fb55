"""The reply after calls that were recorded, not run: the calls listed, no summary written."""

from __future__ import annotations

from typing import Any

import dspy

from freyr_dspy.program import FreyrProgram
from freyr_dspy.testing import FakeCall, FunctionLM
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str) -> str:
    """Current weather in a city."""
    return f"sunny in {city}"


#: The same tool as a spec: an OpenAI tool dict has no function, so its calls are recorded.
SPEC = Toolbox.from_openai([Tool.from_function(weather).openai_schema()])
RUNNABLE = Toolbox([Tool.from_function(weather)])


def program(toolbox: Toolbox, arguments: dict[str, Any]) -> tuple[FreyrProgram, FunctionLM]:
    answers = {
        "intent": {"intents": ["weather"]},
        "parameters": {"arguments": arguments},
        "summary": {"reply": "It is sunny in Oslo."},
    }

    def answer(call: FakeCall) -> Any:
        return answers.get(call.role)

    engine = FunctionLM(answer)
    prog = FreyrProgram(toolbox=toolbox, strategy="freyr")
    prog.set_lm(dspy.LM("fake/recorded", engine=engine, cache=False))
    return prog, engine


def test_calls_recorded_not_run_are_listed_as_the_reply_and_no_summary_is_written() -> None:
    prog, engine = program(SPEC, {"city": "Oslo"})
    result = prog(message="Weather in Oslo?").result
    assert [(c.tool, c.arguments) for c in result.calls] == [("weather", {"city": "Oslo"})]
    assert (
        result.reply
        == "Prepared, not run (these tools have no function here): weather(city='Oslo')."
    )
    assert engine.roles_called() == ["intent", "parameters"]  # no outcome to report, no summary


def test_calls_that_ran_are_summarised_as_before() -> None:
    prog, engine = program(RUNNABLE, {"city": "Oslo"})
    result = prog(message="Weather in Oslo?").result
    assert result.calls[0].outcome.message == "sunny in Oslo"
    assert result.reply == "It is sunny in Oslo."
    assert engine.roles_called() == ["intent", "parameters", "summary"]


def test_a_recorded_call_that_failed_is_explained_by_the_summary() -> None:
    prog, engine = program(SPEC, {"town": "Oslo"})  # no "city": every attempt is refused
    result = prog(message="Weather in Oslo?").result
    assert result.calls and not result.calls[0].outcome.ok
    assert result.reply == "It is sunny in Oslo."  # the fake summary's words, not the listing
    assert engine.roles_called()[-1] == "summary"
