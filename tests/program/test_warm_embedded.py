"""``FreyrProgram.warm`` on the real embedded SmolLM2: a request then reuses the warmed prompts."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import dspy
import pytest

from freyr_dspy.backends import shared_engine
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import make_adapter
from freyr_dspy.schemas import RoleModel, RoleUsage, Sampling
from freyr_dspy.strategies.retry import warm_parameters
from freyr_dspy.tools import render_tool_spec

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"
MESSAGE = "Add a task called buy oat milk for the weekend"


def first_parameters_prompt(program: FreyrProgram) -> RoleUsage:
    """The usage of one first-attempt parameters call for ``add_task`` on ``MESSAGE``."""
    # one token is enough to see what was evaluated
    run = dataclasses.replace(program.start_run(MESSAGE), warming=True)
    with program_adapter(program):
        warm_parameters(run, program.role("parameters"), program.toolbox.get("add_task"))
    return run.usage["parameters"]


def program_adapter(program: FreyrProgram) -> Any:
    """The program's prompt format, as its own calls run under it."""
    return dspy.context(adapter=make_adapter(program.adapter))


def test_after_warm_a_first_call_of_a_tool_evaluates_only_its_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = shared_engine(MODEL)
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0))
    program = FreyrProgram("todo").apply_assignment(
        dict.fromkeys(FreyrProgram("todo").role_names, greedy)
    )
    spec_tokens = engine.count_tokens(render_tool_spec(program.toolbox.get("add_task")))

    engine.forget_prompts()
    cold = first_parameters_prompt(program)
    engine.forget_prompts()
    caplog.clear()  # the cold call above was cut short by hand, and DSPy warned
    with caplog.at_level(logging.WARNING):
        assert program.warm() == 1 + sum(1 for t in program.toolbox if t.parameters)
    assert not [r for r in caplog.records if "truncated" in r.getMessage()]  # cut on purpose
    warm = first_parameters_prompt(program)

    assert cold.input_tokens == warm.input_tokens  # the same prompt
    assert cold.input_tokens - cold.cached_input_tokens > spec_tokens  # the spec was evaluated
    evaluated = warm.input_tokens - warm.cached_input_tokens
    assert evaluated <= engine.count_tokens(MESSAGE) + 12  # the message and the closing tags
    assert warm.cached_input_tokens >= spec_tokens
