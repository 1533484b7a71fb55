"""A search on the real embedded SmolLM2-135M: one todo request (two LM calls), two trials.

The second trial repeats the only configuration of the space, so it must come from the cache
(no model call); the first must have measured real tokens and seconds. The CLI path is the
same code (``tests/test_cli_search.py`` covers it on fakes).
"""

from __future__ import annotations

import pytest

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from freyr_dspy.search import SearchSpace, search_assignments
from freyr_dspy.settings import Settings

pytestmark = pytest.mark.embedded


def test_search_runs_on_the_embedded_model(settings: Settings) -> None:
    todo = get_benchmark("todo")
    options = EvalOptions(data_dir=settings.project_dir)
    # the greeting: intent + chat, the cheapest request of the benchmark
    episodes = [e for e in todo.episodes(options) if e.id == "chat-1"]
    space = SearchSpace(
        candidates={"*": ("embedded/smollm2-135m",)},
        temperature=(0.0, 0.0),
        top_p=None,
        top_k=None,
        max_retries=(0, 0),
        max_tokens=32,
    )
    result = search_assignments(
        todo,
        space,
        n_trials=2,
        episodes=episodes,
        options=options,
        settings=settings,
        objectives=("accuracy", "tokens", "latency"),
    )

    first, second = result.trials
    assert first.state == second.state == "COMPLETE"
    assert first.baseline and not first.cached and second.cached
    assert first.values["tokens"] > 100 and first.values["latency"] > 0
    assert second.values == first.values
    assert first.evaluation is not None and first.evaluation["model_failures"] == 0
    assert result.files["pareto_front"].is_file()
