"""``FreyrProgram.from_spec``: a label's ``+`` switches over the benchmark's settings."""

from __future__ import annotations

import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram, ProgramSpec


def test_switches_after_plus_turn_on_settings_of_the_named_strategy() -> None:
    program = FreyrProgram.from_spec(ProgramSpec(strategy="freyr+replan+calibrate", domain="todo"))
    assert program.strategy_name == "freyr"
    assert program.strategy.config() == {"calibrate": True, "replan": True}
    # what an artifact records is the plain name with its settings, not the label
    recorded = program.spec()
    assert (recorded.strategy, recorded.options) == ("freyr", {"calibrate": True, "replan": True})


def test_switches_are_laid_over_the_settings_given() -> None:
    spec = ProgramSpec(strategy="freyr+replan", options={"confirm": False}, domain="todo")
    program = FreyrProgram.from_spec(spec)
    assert program.strategy.config() == {"confirm": False, "replan": True}
    assert "confirm" not in program.role_names


@pytest.mark.parametrize(
    ("label", "message"),
    [("freyr+replna", "takes no setting 'replna'"), ("freyr++replan", "none empty")],
)
def test_a_bad_switch_is_a_config_error(label: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FreyrProgram.from_spec(ProgramSpec(strategy=label, domain="todo"))
