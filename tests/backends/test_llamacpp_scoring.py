"""Scoring continuations on the real embedded SmolLM2 (in-process llama.cpp)."""

from __future__ import annotations

import math

import dspy
import pytest

from freyr_dspy.backends._embedded import shared_engine
from freyr_dspy.backends._llamacpp import LlamaCppEngine
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.strategies import make_strategy

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"
ASK = [{"role": "user", "content": "Reply with one word: the colour of the sky on a clear day."}]
OTHER = [{"role": "user", "content": "Name a fruit that is yellow and long."}]
CHOICES = ["Blue", "Blueberry", "Tractor"]


def test_scores_are_log_probabilities_the_model_can_tell_apart() -> None:
    scores = shared_engine(MODEL).score_continuations(ASK, CHOICES)
    assert scores is not None
    blue, blueberry, tractor = scores.logprobs
    assert all(math.isfinite(s) and s < 0 for s in scores.logprobs)
    assert blue > tractor  # even a 135M model knows the sky is not a tractor
    assert blue > blueberry  # a longer word that starts the same costs its extra tokens
    assert scores.prompt_tokens > 10


def test_reused_context_and_prefix_cache_change_no_score() -> None:
    """Scores from a cold engine equal those computed after other prompts, from reused state."""
    path = shared_engine(MODEL).model_path
    cold = LlamaCppEngine(path, prefix_cache_bytes=0)
    warm = LlamaCppEngine(path)
    first = cold.score_continuations(ASK, CHOICES)
    warm.score_continuations(ASK, CHOICES)
    warm.score_continuations(OTHER, CHOICES)  # moves the context away
    # reversed: another scoring than the first (the engine remembers scorings it has made)
    again = warm.score_continuations(ASK, CHOICES[::-1])
    assert first is not None and again is not None
    # NOTE: a prompt restored from a saved state has its last token evaluated alone, not in
    # the prompt's batch, as llama-cpp-python does for completions: float sums in another
    # order move a log-probability by under 1 % (0.11 of -15.5 for SmolLM2's "Blueberry").
    assert again.logprobs[::-1] == pytest.approx(first.logprobs, rel=0.02)
    assert 0 < again.evaluated < first.evaluated  # the shared start came back, not re-evaluated


def test_a_scored_prompt_is_saved_for_the_next_prompt_that_starts_the_same_way() -> None:
    """A role that is only ever scored finds its instructions cached on the next request."""
    engine = LlamaCppEngine(shared_engine(MODEL).model_path)
    rules = {"role": "system", "content": "Answer in one word. " * 20}
    first = engine.score_continuations([rules, ASK[0]], CHOICES)
    engine.score_continuations(OTHER, CHOICES)  # moves the context away from the rules
    second = engine.score_continuations([rules, OTHER[0]], CHOICES)
    assert first is not None and second is not None
    # only the user turn is new: far fewer tokens than the 100+ of the instructions
    assert second.evaluated < second.prompt_tokens - 100 < first.evaluated


def test_a_scoring_made_before_is_remembered_until_prompts_are_forgotten() -> None:
    """The calibrated choice scores one content-free prompt per toolbox: computed once."""
    engine = LlamaCppEngine(shared_engine(MODEL).model_path)
    first = engine.score_continuations(ASK, CHOICES)
    engine.score_continuations(OTHER, CHOICES)
    again = engine.score_continuations(ASK, CHOICES)
    assert first is not None and again is not None
    assert again.logprobs == first.logprobs and again.prompt_tokens == first.prompt_tokens
    assert again.evaluated == 0 < first.evaluated
    engine.forget_prompts()
    cold = engine.score_continuations(ASK, CHOICES)
    assert cold is not None and cold.evaluated == first.evaluated


def test_generation_after_scoring_is_unchanged() -> None:
    """Scoring leaves the context consistent: the next completion is a fresh engine's."""
    path = shared_engine(MODEL).model_path

    def answer(engine: LlamaCppEngine) -> str:
        lm = dspy.LM(MODEL, engine=engine, temperature=0.0, max_tokens=12, cache=False)
        return str(lm(ASK[0]["content"])[0])

    fresh = answer(LlamaCppEngine(path))
    scored = LlamaCppEngine(path)
    scored.score_continuations(OTHER, CHOICES)
    scored.score_continuations(ASK, CHOICES)  # the whole prompt is now in context
    assert answer(scored) == fresh


def test_a_calibrated_freyr_program_runs_end_to_end_on_the_embedded_model() -> None:
    program = FreyrProgram("todo", strategy=make_strategy("freyr", calibrate=True))
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    program.apply_assignment(dict.fromkeys(program.role_names, greedy))
    result = program(message="Add a task called buy milk").result
    assert result.intents[0] in program.toolbox.names  # SmolLM2 plans add_task first
    # the intent call, then its prompt scored twice (message, content-free): mostly cached
    intent = result.usage["intent"]
    assert intent.lm_calls == 3
    assert intent.cached_input_tokens > 0.5 * intent.input_tokens


def test_forgotten_prompts_are_evaluated_again() -> None:
    """``forget_prompts`` leaves nothing cached: benchmarks start each contestant cold."""
    engine = LlamaCppEngine(shared_engine(MODEL).model_path)
    lm = dspy.LM(MODEL, engine=engine, temperature=0.0, max_tokens=4, cache=False)
    lm(ASK[0]["content"])
    sent, evaluated = engine.prompt_tokens_sent, engine.prompt_tokens_evaluated
    lm(ASK[0]["content"])
    assert engine.prompt_tokens_evaluated - evaluated <= 1  # the same prompt: cached
    engine.forget_prompts()
    evaluated = engine.prompt_tokens_evaluated
    lm(ASK[0]["content"])
    assert engine.prompt_tokens_evaluated - evaluated == sent  # all of it again
