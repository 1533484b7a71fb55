"""The search space, the evaluation cache and storage URLs: pure units, no study run."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest

from freyr_dspy.errors import ConfigError
from freyr_dspy.search import EvaluationCache, SearchSpace, TrialConfig, baseline, suggest
from freyr_dspy.search._space import TrialPicker, parse_bounds, parse_candidates, supports_top_k
from freyr_dspy.studies import redact, storage_url

SMOL, QWEN, GPT = "embedded/smollm2-135m", "embedded/qwen2.5-coder-0.5b", "openai/gpt-4o-mini"


def test_baseline_is_the_default_configuration() -> None:
    space = SearchSpace(candidates={"intent": (QWEN, SMOL), "*": (GPT, SMOL)})
    config, params = baseline(space)

    assert config.strategy == "freyr" and config.max_retries == 3 and config.num_demos == 0
    assert {r: s.model for r, s in config.assignment.items()} == {
        "intent": QWEN,
        "confirm": GPT,
        "parameters": GPT,
        "summary": GPT,
        "chat": GPT,
    }
    intent = config.assignment["intent"].sampling
    assert (intent.temperature, intent.top_p, intent.top_k, intent.seed) == (0.0, 1.0, 40, 0)
    assert config.assignment["parameters"].sampling.top_k is None  # openai has no top-k
    assert params["model.intent"] == QWEN and params["max_retries"] == 3
    assert "sampling.intent.top_k" in params and "sampling.parameters.top_k" not in params
    assert "strategy" not in params  # a single choice is fixed, not searched


def test_defaults_are_clamped_into_the_searched_ranges() -> None:
    space = SearchSpace(
        candidates={"*": (SMOL,)},
        temperature=(0.3, 0.7),
        top_p=(0.5, 0.8),
        max_retries=(0, 1),
        top_k=(5, 10),
    )
    config, _ = baseline(space)
    sampling = config.assignment["intent"].sampling
    assert (sampling.temperature, sampling.top_p, sampling.top_k) == (0.3, 0.8, 5)
    assert config.max_retries == 1


def test_a_trial_suggests_every_open_dimension_by_name() -> None:
    space = SearchSpace(candidates={"intent": (SMOL, QWEN), "*": (SMOL,)}, max_retries=(0, 3))
    fixed = {
        "model.intent": QWEN,
        "sampling.intent.temperature": 0.3,
        "sampling.intent.top_p": 0.65,
        "sampling.intent.top_k": 100,
        "max_retries": 2,
        **{
            f"sampling.{r}.{p}": v
            for r in ("confirm", "parameters", "summary", "chat")
            for p, v in (("temperature", 0.1), ("top_p", 0.9), ("top_k", 10))
        },
    }
    config = suggest(TrialPicker(optuna.trial.FixedTrial(fixed)), space)

    assert config.assignment["intent"].model == QWEN
    assert config.assignment["intent"].sampling.temperature == 0.3
    assert config.assignment["summary"].sampling.top_k == 10
    assert config.max_retries == 2


def test_shared_sampling_uses_one_set_of_parameters() -> None:
    space = SearchSpace(candidates={"intent": (SMOL,), "*": (GPT,)}, shared_sampling=True)
    config, params = baseline(space)
    assert sorted(k for k in params if k.startswith("sampling")) == [
        "sampling.temperature",
        "sampling.top_k",
        "sampling.top_p",
    ]
    assert config.assignment["intent"].sampling.top_k == 40
    assert config.assignment["chat"].sampling.top_k is None
    assert config.assignment["chat"].sampling.temperature == 0.0


def test_off_dimensions_leave_backend_defaults() -> None:
    space = SearchSpace(
        candidates={"*": (SMOL,)}, temperature=None, top_p=None, top_k=None, max_retries=(2, 2)
    )
    config, params = baseline(space)
    assert params == {}
    assert config.assignment["intent"].sampling.as_kwargs() == {"seed": 0}


def test_canonical_configuration_is_stable() -> None:
    config, _ = baseline(SearchSpace(candidates={"*": (SMOL, QWEN)}))
    again = TrialConfig.model_validate(json.loads(config.canonical()))
    assert again.canonical() == config.canonical() and again.digest() == config.digest()
    other = config.model_copy(update={"max_retries": 1})
    assert other.digest() != config.digest()


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": (1.0, 0.5)},
        {"max_retries": (-1, 2)},
        {"strategies": ()},
        {"candidates": {"intent": ()}},
    ],
)
def test_bad_spaces_are_refused(bad: dict) -> None:
    with pytest.raises(ConfigError):
        SearchSpace(**{"candidates": {"*": (SMOL,)}, **bad})


def test_candidate_and_range_options_are_parsed() -> None:
    lists = parse_candidates(["intent=a/x, b/y", "parameters=a/x"], "c/z,c/z")
    assert lists == {"*": ("c/z",), "intent": ("a/x", "b/y"), "parameters": ("a/x",)}
    assert parse_bounds("0.2,0.9", "temperature") == (0.2, 0.9)
    assert parse_bounds("3", "max-retries") == (3.0, 3.0)
    assert parse_bounds("off", "top-p") is None
    for bad in (["intent"], ["=a/x"], ["intent= , "]):
        with pytest.raises(ConfigError):
            parse_candidates(bad)
    with pytest.raises(ConfigError, match="numbers"):
        parse_bounds("low,high", "temperature")
    with pytest.raises(ConfigError, match="LOW,HIGH"):
        parse_bounds("0,1,2", "temperature")


def test_top_k_is_searched_only_where_the_backend_honours_it() -> None:
    assert supports_top_k(SMOL) and supports_top_k("ollama_chat/qwen2.5:7b")
    assert not supports_top_k(GPT) and not supports_top_k("hosted_vllm/x")


def test_the_cache_round_trips_and_survives_a_corrupt_entry(tmp_path: Path) -> None:
    cache = EvaluationCache(tmp_path / "cache")
    key = cache.key(config={"a": 1}, benchmark="b")
    assert key == cache.key(benchmark="b", config={"a": 1})  # order-independent
    assert cache.get(key) is None
    cache.put(key, {"accuracy": 0.5}, benchmark="b")
    assert cache.get(key) == {"accuracy": 0.5}
    assert (cache.hits, cache.misses) == (1, 1)

    next(tmp_path.glob("cache/*/*.json")).write_text("{trunc", encoding="utf-8")
    assert cache.get(key) is None
    assert not list(tmp_path.glob("cache/*/.tmp-*"))

    off = EvaluationCache(None)
    off.put(key, {"accuracy": 1.0})
    assert off.get(key) is None


@pytest.mark.parametrize(
    ("spec", "url"),
    [
        ("runs/s.journal", "journal:runs/s.journal"),
        ("journal:/tmp/x.log", "journal:/tmp/x.log"),
        ("runs/s.db", "sqlite:///runs/s.db"),
        ("sqlite:////tmp/s.db", "sqlite:////tmp/s.db"),
        ("postgres://u:pw@127.0.0.1/db", "postgresql://u:pw@127.0.0.1/db"),
        ("postgresql+psycopg2://u@h/db", "postgresql+psycopg2://u@h/db"),
    ],
)
def test_storage_specs_become_urls(spec: str, url: str) -> None:
    assert storage_url(spec) == url


def test_unknown_storage_schemes_and_passwords() -> None:
    with pytest.raises(ConfigError, match="redis"):
        storage_url("redis://h:6379")
    assert redact("postgresql://freyr:s3cret@h:5432/db") == "postgresql://freyr:***@h:5432/db"
    assert redact("postgresql://freyr@h/db") == "postgresql://freyr@h/db"
