"""The real embedded default (SmolLM2-135M via llama.cpp, in-process): a few short calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import dspy
import pytest

from freyr_dspy.backends import make_lm
from freyr_dspy.backends._embedded import shared_engine
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import LeanAdapter
from freyr_dspy.roles import ChatResponder, IntentClassifier, ParameterFiller
from freyr_dspy.schemas import RoleModel, Sampling
from freyr_dspy.text_stream import listening

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"
SHORT = Sampling(temperature=0.0, seed=7, max_tokens=48)
INTENT_INPUTS = {
    "conversation": "(none)",
    "message": "Add a task called buy milk",
    "tools": "- conversation: just talk\n- add_task: Add a task.\n- list_tasks: List the tasks.",
    "state": "The to-do list is empty.",
}
PARAMETER_INPUTS = {
    "conversation": "(none)",
    "message": "Add a task called buy milk",
    "state": "The to-do list is empty.",
    "tool": "- add_task: Add a task.\n    - title (string, required): title of the task",
    "feedback": "none",
}


@pytest.fixture(scope="module")
def engine_reports() -> Iterator[list[dict[str, Any]]]:
    """Spy on the engine's llama.cpp calls; yields the raw ``usage`` dicts it reported."""
    engine = shared_engine(MODEL)
    llama = engine._model()
    reports: list[dict[str, Any]] = []
    original = llama.create_chat_completion

    def spy(**kwargs: Any) -> Any:
        raw = original(**kwargs)
        if not kwargs.get("stream"):  # a stream's chunks carry no usage
            reports.append(dict(raw["usage"]))
        return raw

    llama.create_chat_completion = spy
    yield reports
    llama.create_chat_completion = original


def run_role(role: dspy.Module, sampling: Sampling = SHORT, **inputs: Any) -> Any:
    role.set_lm(make_lm(MODEL, sampling))
    with dspy.context(adapter=dspy.JSONAdapter()):
        return role(**inputs)


def test_intent_role_returns_its_type_and_the_engine_usage(
    engine_reports: list[dict[str, Any]],
) -> None:
    with dspy.track_usage() as tracker:
        first = run_role(IntentClassifier(), **INTENT_INPUTS)
        second = run_role(IntentClassifier(), **INTENT_INPUTS)
    assert first.parsed_ok, "the JSON-schema grammar must make the output parseable"
    assert isinstance(first.intents, list)
    assert all(isinstance(item, str) for item in first.intents)
    assert second.intents == first.intents  # temperature 0 with a seed
    usages = tracker.usage_data[MODEL]
    assert len(usages) == 2
    assert usages[0]["prompt_tokens"] > 100 and usages[0]["completion_tokens"] > 0
    assert [(u["prompt_tokens"], u["completion_tokens"]) for u in usages] == [
        (r["prompt_tokens"], r["completion_tokens"]) for r in engine_reports[-2:]
    ]


def test_concurrent_calls_share_the_engine_safely() -> None:
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def work(name: str, role: dspy.Module, inputs: dict[str, Any]) -> None:
        try:
            results[name] = run_role(
                role, Sampling(temperature=0.0, seed=7, max_tokens=24), **inputs
            )
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=("intent", IntentClassifier(), INTENT_INPUTS)),
        threading.Thread(target=work, args=("parameters", ParameterFiller(), PARAMETER_INPUTS)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert isinstance(results["intent"].intents, list)
    assert results["parameters"].parsed_ok
    assert isinstance(results["parameters"].arguments, dict)


def test_program_request_reports_usage_per_role(engine_reports: list[dict[str, Any]]) -> None:
    tiny = Sampling(temperature=0.0, seed=7, max_tokens=24)  # accounting, not quality
    program = FreyrProgram("todo", max_retries=0)
    program.apply_assignment(
        dict.fromkeys(program.role_names, RoleModel(model=MODEL, sampling=tiny))
    )
    before = len(engine_reports)
    result = program(message="Add a task called buy milk").result
    # what a 135M model decides varies; the accounting must be exact whatever it decides
    assert "intent" in result.usage and ("summary" in result.usage or "chat" in result.usage)
    assert result.reply
    reported = engine_reports[before:]
    total = result.total_usage
    assert total.lm_calls == len(reported)
    assert total.input_tokens == sum(r["prompt_tokens"] for r in reported)
    assert total.output_tokens == sum(r["completion_tokens"] for r in reported)
    assert all(u.seconds > 0 for u in result.usage.values())


def test_prefix_cache_reuses_prompts_and_changes_no_answer() -> None:
    """Interleaved roles: each role's prefix comes back from the cache, answers stay the same."""
    from freyr_dspy.backends._llamacpp import LlamaCppEngine

    def answers(engine: LlamaCppEngine) -> list[Any]:
        lm_kwargs = {"temperature": 0.0, "max_tokens": 24, "cache": False}
        intent, parameters = IntentClassifier(), ParameterFiller()
        intent.set_lm(dspy.LM(MODEL, engine=engine, **lm_kwargs))
        parameters.set_lm(dspy.LM(MODEL, engine=engine, **lm_kwargs))
        outputs = []
        with dspy.context(adapter=dspy.JSONAdapter()):
            for message in ("Add a task called buy milk", "Add a task called call mum"):
                outputs.append(intent(**{**INTENT_INPUTS, "message": message}).intents)
                outputs.append(parameters(**{**PARAMETER_INPUTS, "message": message}).arguments)
        return outputs

    path = shared_engine(MODEL).model_path
    cold = LlamaCppEngine(path, prefix_cache_bytes=0)
    warm = LlamaCppEngine(path)
    assert answers(warm) == answers(cold)
    assert warm.prompt_tokens_sent == cold.prompt_tokens_sent
    # the second round finds both roles' system prompts and demos in the cache
    assert warm.prompt_tokens_evaluated < 0.75 * cold.prompt_tokens_evaluated


def test_a_streamed_call_answers_and_counts_as_the_whole_call() -> None:
    role = ChatResponder()
    role.set_lm(make_lm(MODEL, SHORT))
    inputs = {"conversation": "(none)", "message": "Hello, who are you?", "state": "(none)"}
    shared_engine(MODEL).forget_prompts()
    heard: list[str] = []
    with dspy.context(adapter=LeanAdapter()), dspy.track_usage() as tracker:
        with listening(heard.append):
            streamed = role(**inputs)
        shared_engine(MODEL).forget_prompts()  # the same prompt evaluated again, not cached
        whole = role(**inputs)
    assert len(heard) > 3 and "".join(heard).startswith('{"reply": ')
    assert streamed.reply == whole.reply
    first, second = tracker.usage_data[MODEL]
    assert first["prompt_tokens"] == second["prompt_tokens"] > 0
    assert first["completion_tokens"] == second["completion_tokens"] > 0
