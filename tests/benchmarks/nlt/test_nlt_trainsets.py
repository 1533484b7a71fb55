"""The project's NLT trainsets: valid, large enough, covering, and disjoint from the test inputs."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from freyr_dspy.benchmarks import EvalOptions, get_benchmark
from tests.support.paths import TRAINSETS_DIR

TRAINSETS = TRAINSETS_DIR


def normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@pytest.mark.parametrize("name", ["nlt-alex", "nlt-sage"])
def test_trainset_is_valid_and_disjoint_from_the_benchmark(data_dir: Path, name: str) -> None:
    bench = get_benchmark(name)
    options = EvalOptions(data_dir=data_dir)
    train = bench.train_episodes(TRAINSETS, options)
    test = bench.episodes(options)
    assert len(train) >= 30
    assert all(e.case == "train" and e.steps[0].expected["tools"] is not None for e in train)
    used = {tool for e in train for tool in e.steps[0].expected["tools"]}
    assert used == set(test[0].steps[0].expected["catalog"]), "every tool needs examples"
    assert any(not e.steps[0].expected["tools"] for e in train), "no-tool examples needed"
    test_messages = [normal(e.steps[0].message) for e in test]
    for episode in train:
        message = normal(episode.steps[0].message)
        closest = max(difflib.SequenceMatcher(None, message, t).ratio() for t in test_messages)
        assert closest < 0.75, f"{name} {episode.id} is too close to a benchmark input"
