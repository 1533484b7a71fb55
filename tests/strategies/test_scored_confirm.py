"""Confirm's verdicts read from scored likelihoods (``freyr+scored_confirm``), on fakes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from freyr_dspy.backends._llamacpp_scoring import ContinuationScores
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import make_strategy, parse_label
from freyr_dspy.strategies._scored_confirm import CONFIRM_MARGIN
from freyr_dspy.testing import Answer, ScriptedLM

MESSAGE = "Add buy milk to my list"
SCRIPT: dict[str, dict[str, Answer]] = {
    "intent": {"*": {"intents": ["add_task", "list_tasks"]}},
    # Written verdicts keep both tools: only the scored ones may drop one.
    "confirm": {"*": {"asked": {"add_task": True, "list_tasks": True}}},
    "parameters": {"*": {"arguments": {"title": "buy milk"}}},
    "summary": {"*": {"reply": "Done."}},
    "chat": {"*": {"reply": "I have no tool for that."}},
}


class VerdictScoringLM(ScriptedLM):
    """A scripted fake that also scores ``true``/``false`` for a tool: ``margins[tool]`` is
    log P(true) - log P(false); it records each answer start it scored and the prompt."""

    def __init__(self, table: Mapping[str, Mapping[str, Answer]], margins: dict[str, float]):
        super().__init__(table)
        self.margins = margins
        self.scored: list[tuple[str, str]] = []

    def score_continuations(
        self, messages: list[dict[str, Any]], continuations: Sequence[str]
    ) -> ContinuationScores:
        true, false = continuations
        lead = true.removesuffix("true")
        assert false == lead + "false"
        name = list(json.loads(lead + "true}}")["asked"])[-1]
        self.scored.append((lead, messages[-1]["content"]))
        return ContinuationScores((self.margins[name] - 1.0, -1.0), prompt_tokens=80, evaluated=30)


@pytest.fixture
def program(freyr_on_fake: Callable[..., FreyrProgram]) -> Callable[..., FreyrProgram]:
    """Build a todo program with the given FREYR settings over one fake for every role."""
    return freyr_on_fake


def test_a_planned_tool_is_kept_only_when_true_is_clearly_likelier(program: Any) -> None:
    # list_tasks: true is likelier, but by less than the margin - greedy would keep it
    margins = {"add_task": CONFIRM_MARGIN + 1.5, "list_tasks": CONFIRM_MARGIN / 2}
    engine = VerdictScoringLM(SCRIPT, margins)
    result = program(engine, scored_confirm=True)(message=MESSAGE).result
    assert result.intents == ["add_task"]
    assert [call.tool for call in result.calls] == ["add_task"]
    # one prompt showing both tools; each verdict scored after the one before it
    (first, prompt), (second, same_prompt) = engine.scored
    assert first == '{"asked": {"add_task": '
    assert second == '{"asked": {"add_task": true, "list_tasks": '
    assert prompt == same_prompt and MESSAGE in prompt
    assert "add_task" in prompt and "list_tasks" in prompt
    confirm = result.usage["confirm"]
    assert (confirm.lm_calls, confirm.input_tokens, confirm.cached_input_tokens) == (2, 160, 100)


def test_a_plan_whose_every_tool_is_doubtful_is_answered_in_words(program: Any) -> None:
    engine = VerdictScoringLM(SCRIPT, {"add_task": 0.2, "list_tasks": -2.0})
    result = program(engine, scored_confirm=True)(message=MESSAGE).result
    assert result.calls == [] and result.reply == "I have no tool for that."
    # the second verdict is scored after the first as it was decided
    assert engine.scored[1][0] == '{"asked": {"add_task": false, "list_tasks": '


def test_one_tool_plans_are_scored_only_with_abstain(program: Any) -> None:
    script = {**SCRIPT, "intent": {"*": {"intents": ["add_task"]}}}
    engine = VerdictScoringLM(script, {"add_task": -3.0})
    kept = program(engine, scored_confirm=True)(message=MESSAGE).result
    assert [call.tool for call in kept.calls] == ["add_task"] and engine.scored == []
    dropped = program(engine, scored_confirm=True, abstain=True)(message=MESSAGE).result
    assert dropped.calls == [] and [lead for lead, _ in engine.scored] == [
        '{"asked": {"add_task": '
    ]


def test_without_the_switch_or_a_scorer_the_verdicts_are_written(program: Any) -> None:
    engine = VerdictScoringLM(SCRIPT, {"add_task": -3.0, "list_tasks": -3.0})
    written = program(engine)(message=MESSAGE).result
    assert [call.tool for call in written.calls] == ["add_task", "list_tasks"]
    assert engine.scored == []
    no_scorer = ScriptedLM(SCRIPT)  # another backend: cannot score
    result = program(no_scorer, scored_confirm=True)(message=MESSAGE).result
    assert [call.tool for call in result.calls] == ["add_task", "list_tasks"]


def test_the_setting_is_named_recorded_and_needs_confirm() -> None:
    name, switches = parse_label("freyr+scored_confirm")
    strategy = make_strategy(name, **switches)
    assert strategy.config() == {"scored_confirm": True}
    with pytest.raises(ConfigError, match="scored_confirm checks plans with the confirm role"):
        make_strategy("freyr", confirm=False, scored_confirm=True)


def test_a_one_tool_plan_may_be_scored_with_a_margin_of_its_own(program: Any) -> None:
    script = {**SCRIPT, "intent": {"*": {"intents": ["add_task"]}}}
    sure_enough = {"add_task": CONFIRM_MARGIN + 0.5}  # kept at the usual margin
    switches = {"scored_confirm": True, "abstain": True}
    kept = program(VerdictScoringLM(script, sure_enough), **switches)(message=MESSAGE).result
    assert [call.tool for call in kept.calls] == ["add_task"]
    stricter = {**switches, "abstain_margin": CONFIRM_MARGIN + 1.0}
    dropped = program(VerdictScoringLM(script, sure_enough), **stricter)(message=MESSAGE).result
    assert dropped.calls == [] and dropped.reply == "I have no tool for that."
    # plans of several tools keep the usual margin
    both = {"add_task": CONFIRM_MARGIN + 0.5, "list_tasks": CONFIRM_MARGIN + 0.5}
    several = program(VerdictScoringLM(SCRIPT, both), **stricter)(message=MESSAGE).result
    assert [call.tool for call in several.calls] == ["add_task", "list_tasks"]


def test_the_one_tool_margin_is_written_in_the_label_and_needs_scored_one_tool_verdicts() -> None:
    label = "freyr+abstain+scored_confirm+abstain_margin=2"
    name, settings = parse_label(label)
    assert settings == {"abstain": True, "scored_confirm": True, "abstain_margin": 2.0}
    strategy = make_strategy(name, **settings)
    assert strategy.config() == settings  # an artifact records it, and gets it back
    assert parse_label("freyr+confirm=false")[1] == {"confirm": False}
    with pytest.raises(ConfigError, match="abstain_margin='high' is not a number"):
        parse_label("freyr+abstain_margin=high")
    with pytest.raises(ConfigError, match="needs abstain and scored_confirm"):
        make_strategy("freyr", scored_confirm=True, abstain_margin=2.0)
