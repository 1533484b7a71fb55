"""Switches are policies: a label's flat settings are packed into them in one place, the
program's retries and grounding live in the call policy, and a run ends one way."""

from __future__ import annotations

import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import (
    CallPolicy,
    PlanningPolicy,
    get_strategy,
    make_strategy,
    parse_label,
    setting_names,
)
from freyr_dspy.strategies._freyr import Freyr
from freyr_dspy.strategies._nlt import Nlt


def test_a_label_is_packed_into_the_policies_it_names() -> None:
    name, settings = parse_label("freyr+abstain+require_stated+rounds=1")
    strategy = make_strategy(name, **settings)
    assert isinstance(strategy, Freyr)
    assert strategy.planning == PlanningPolicy(abstain=True, rounds=1)
    assert strategy.calling == CallPolicy(require_stated=True)
    assert strategy.config() == {"abstain": True, "rounds": 1, "require_stated": True}


def test_a_strategy_built_from_policies_equals_the_one_built_from_its_label() -> None:
    built = Freyr(planning=PlanningPolicy(refill=True), calling=CallPolicy(split_calls=True))
    assert built.config() == make_strategy("freyr", refill=True, split_calls=True).config()
    assert Nlt(calling=CallPolicy(exclude_blamed=True)).config() == {"exclude_blamed": True}


def test_the_flat_settings_are_the_policies_fields_and_the_program_settings_are_not() -> None:
    names = setting_names(get_strategy("freyr"))
    assert {"confirm", "abstain", "rounds", "require_stated", "split_calls"} <= set(names)
    assert "max_retries" not in names and "ground_arguments" not in names
    assert setting_names(get_strategy("nlt"))[-1] == "respond"
    with pytest.raises(ConfigError, match="max_retries"):
        make_strategy("freyr", max_retries=1)


def test_the_program_sets_retries_and_grounding_in_the_call_policy() -> None:
    program = FreyrProgram("todo", strategy="freyr+require_stated", max_retries=1)
    program.ground_arguments = False
    assert program.strategy.calling == CallPolicy(
        require_stated=True, max_retries=1, ground_arguments=False
    )
    program.use_strategy(make_strategy("nlt"))  # a new strategy keeps the program's settings
    assert (program.max_retries, program.ground_arguments) == (1, False)
    assert program.strategy.config() == {}  # and no label or config carries them


def test_a_gated_strategy_holds_its_inner_strategys_call_policy() -> None:
    program = FreyrProgram("todo", strategy="gated", max_retries=0)
    assert program.strategy.inner.calling.max_retries == 0
    assert program.strategy.calling is program.strategy.inner.calling


def test_a_strategy_without_a_reply_ends_its_run_on_nothing() -> None:
    program = FreyrProgram("todo", strategy=Nlt(respond=False))
    run = program.start_run("hello")
    assert run.ending == "reply" and program.strategy.ending(run).ending == "nothing"
    assert program.start_run("hi", ending="calls").ending == "calls"
    assert Nlt().ending(run) is run


def test_a_negative_retry_count_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_retries"):
        CallPolicy(max_retries=-1)
