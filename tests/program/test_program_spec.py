"""``build_program``: a spec's strategy label, its ``+`` switches and the benchmark's settings."""

from __future__ import annotations

import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program._spec import ProgramSpec, build_program, spec_of


def test_switches_after_plus_turn_on_settings_of_the_named_strategy() -> None:
    program = build_program(ProgramSpec(strategy="freyr+replan+calibrate", domain="todo"))
    assert program.strategy_name == "freyr"
    assert program.strategy.config() == {"calibrate": True, "replan": True}
    # what an artifact records is the plain name with its settings, not the label
    recorded = spec_of(program)
    assert (recorded.strategy, recorded.options) == ("freyr", {"calibrate": True, "replan": True})


def test_switches_are_laid_over_the_settings_given() -> None:
    spec = ProgramSpec(strategy="freyr+replan", options={"confirm": False}, domain="todo")
    program = build_program(spec)
    assert program.strategy.config() == {"confirm": False, "replan": True}
    assert "confirm" not in program.role_names


@pytest.mark.parametrize(
    ("label", "message"),
    [("freyr+replna", "takes no setting 'replna'"), ("freyr++replan", "none empty")],
)
def test_a_bad_switch_is_a_config_error(label: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_program(ProgramSpec(strategy=label, domain="todo"))
