"""``FreyrProgram.for_model``: the one place a program is assembled from a model id."""

from __future__ import annotations

from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import strategy_label
from freyr_dspy.tools import Tool, Toolbox


def weather(city: str) -> str:
    """Current weather in a city."""
    return city


TOOLS = Toolbox([Tool.from_function(weather)])


def test_a_model_without_a_preset_runs_the_default_strategy_on_every_role() -> None:
    program = FreyrProgram.for_model("fake/rules", toolbox=TOOLS)
    assert strategy_label(program.strategy) == "freyr"
    assert {spec.model for spec in program.assignment.values()} == {"fake/rules"}
    assert set(program.assignment) == set(program.role_names)


def test_sampling_may_be_given_as_a_mapping_as_well_as_specs() -> None:
    sampling = {"temperature": 0, "intent.max_tokens": 32}
    program = FreyrProgram.for_model("fake/rules", toolbox=TOOLS, sampling=sampling)
    specs = ["temperature=0", "intent.max_tokens=32"]
    same = FreyrProgram.for_model("fake/rules", toolbox=TOOLS, sampling=specs)
    assert program.assignment == same.assignment
    assert program.assignment["intent"].sampling.max_tokens == 32
    assert program.assignment["summary"].sampling.max_tokens != 32
    assert all(spec.sampling.temperature == 0 for spec in program.assignment.values())


def test_a_named_strategy_is_taken_as_written() -> None:
    program = FreyrProgram.for_model("fake/rules", toolbox=TOOLS, strategy="freyr+asks")
    assert strategy_label(program.strategy) == "freyr+asks"
    assert "asks" in program.role_names
