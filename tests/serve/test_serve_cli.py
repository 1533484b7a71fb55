"""``freyr serve``'s options: which programs it serves, under which names, from what."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from freyr_dspy.artifacts import build_meta, save
from freyr_dspy.cli import main
from freyr_dspy.cli._serve_cmd import served_programs
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.serve import serving_in_thread
from freyr_dspy.serve._context import model_context
from freyr_dspy.settings import Settings
from freyr_dspy.testing import register_fake, unregister_fake
from freyr_dspy.testing._rules import RulesLM
from freyr_dspy.tools import Toolbox
from tests.support.presets import SMALL_PRESET
from tests.support.serve_helpers import ASK_WEATHER, TOOLS, WEATHER, serving

#: Fakes named in these tests, each the keyword-rules agent.
FAKES = ("other", "chatty", "a", "x")


@pytest.fixture(autouse=True)
def fakes() -> Iterator[None]:
    for name in FAKES:
        register_fake(name, RulesLM)
    yield
    for name in FAKES:
        unregister_fake(name)


def options(**given: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "program_paths": (),
        "strategy": "freyr",
        "max_retries": 3,
        "model_specs": (),
        "sampling_specs": (),
        "api_base": None,
    }
    return defaults | given


def test_each_bare_model_id_serves_the_strategy_under_that_id(settings: Settings) -> None:
    served = served_programs(
        settings,
        **options(
            strategy="freyr+require_stated",
            model_specs=("fake/rules", "fake/other", "chat=fake/chatty"),
        ),
    )
    assert [s.name for s in served] == ["fake/rules", "fake/other"]
    first = served[0].program
    assert first.strategy_name == "freyr" and first.strategy.config() == {"require_stated": True}
    assert first.assignment["intent"].model == "fake/rules"
    assert first.assignment["chat"].model == "fake/chatty"  # role specs apply to each
    assert served[1].program.assignment["intent"].model == "fake/other"


def test_without_a_model_the_default_model_is_served(tmp_path: Path) -> None:
    settings = Settings(project_dir=tmp_path, default_model="fake/other")  # as FREYR_MODEL sets
    [served] = served_programs(settings, **options())
    assert served.name == "fake/other" and served.context_tokens is None  # a fake has no window


def test_the_context_window_comes_from_the_models() -> None:
    assert model_context("embedded/qwen2.5-coder-0.5b") == 8192  # the embedded catalog
    assert model_context("ollama_chat/qwen2.5:7b") == 8192  # the num_ctx make_lm asks for
    assert model_context("openai/gpt-4o-mini") == 128000  # litellm's entry
    assert model_context("hosted_vllm/anything") is None  # unknown: not checked


def test_role_specs_alone_serve_the_strategy_under_its_label(settings: Settings) -> None:
    [served] = served_programs(settings, **options(strategy="nlt", model_specs=("chat=fake/a",)))
    assert served.name == "nlt"
    assert served.program.assignment["chat"].model == "fake/a"


def test_without_a_strategy_each_model_serves_its_preset(settings: Settings) -> None:
    small = "embedded/qwen2.5-coder-0.5b"  # built, not loaded: no request is answered here
    plain, preset = served_programs(
        settings, **options(strategy=None, model_specs=("fake/rules", small))
    )
    assert plain.program.strategy.config() == {}
    assert preset.program.strategy.config() == SMALL_PRESET
    [named] = served_programs(settings, **options(strategy="freyr", model_specs=(small,)))
    assert named.program.strategy.config() == {}  # a strategy named is taken as written


def weather_program(tools: list[dict[str, Any]]) -> FreyrProgram:
    program = FreyrProgram(toolbox=Toolbox.from_openai(tools))
    return program.apply_assignment(
        dict.fromkeys(program.role_names, RoleModel(model="fake/rules"))
    )


@pytest.mark.server
def test_an_artifact_is_served_by_its_stem_and_keeps_to_its_tools(settings: Settings) -> None:
    path = save(weather_program([WEATHER]), settings.compiled_dir / "weather.json")
    [served] = served_programs(settings, **options(program_paths=(path,)))
    assert (served.name, served.source) == ("weather", str(path))
    assert served.compiled_for is not None and list(served.compiled_for) == ["get_weather"]
    rules = [{"role": "user", "content": "get the weather in location=Oslo"}]
    with serving(served) as base:
        url = f"{base}/chat/completions"
        ok = httpx.post(url, json={"model": "weather", "messages": rules, "tools": [WEATHER]})
        other = httpx.post(url, json={"model": "weather", "messages": rules, "tools": TOOLS})
    [call] = ok.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"location": "Oslo"}
    assert other.json()["error"]["code"] == "tools_changed"


def test_an_artifact_for_any_tools_takes_every_request(settings: Settings) -> None:
    program = weather_program([WEATHER])
    path = save(program, settings.compiled_dir / "any.json", build_meta(program, toolbox=None))
    [served] = served_programs(settings, **options(program_paths=(path,), model_specs=("fake/x",)))
    assert served.compiled_for is None
    assert {spec.model for spec in served.program.assignment.values()} == {"fake/x"}


def test_a_domain_artifact_is_refused(settings: Settings) -> None:
    program = FreyrProgram("todo").apply_assignment(
        dict.fromkeys(
            ("intent", "confirm", "parameters", "summary", "chat"), RoleModel(model="fake/rules")
        )
    )
    path = save(program, settings.compiled_dir / "todo.json")
    with pytest.raises(ConfigError, match="'todo' domain"):
        served_programs(settings, **options(program_paths=(path,)))


def test_the_command_lists_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--program", "--max-queue", "--api-key", "--any-model", "--allow-changed-tools"):
        assert flag in text


@pytest.mark.server
def test_asks_are_answered_by_the_rules_fake_through_the_cli_path(settings: Settings) -> None:
    [served] = served_programs(settings, **options(model_specs=("fake/rules",)))
    with serving(served) as base:
        response = httpx.post(
            f"{base}/chat/completions",
            json={"model": "fake/rules", "messages": ASK_WEATHER},
        )
    assert response.json()["choices"][0]["message"]["content"].startswith("Hello!")


@pytest.mark.server
def test_the_command_serves_an_artifact_given_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = save(weather_program([WEATHER]), tmp_path / "elsewhere" / "weather.json")
    monkeypatch.chdir(tmp_path)  # no compiled/ here: only the path itself can find it
    answers: list[httpx.Response] = []

    def serve_once(app: Any, host: str, port: int) -> None:
        with serving_in_thread(app) as base:
            ask = [{"role": "user", "content": "get the weather in location=Oslo"}]
            body = {"model": "weather", "messages": ask, "tools": [WEATHER]}
            answers.append(httpx.post(f"{base}/chat/completions", json=body))
            answers.append(httpx.get(f"{base}/models"))

    monkeypatch.setattr("freyr_dspy.serve.run_server", serve_once)
    assert main(["serve", "--program", str(path.resolve())]) == 0
    completion, models = answers
    [call] = completion.json()["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"location": "Oslo"}
    [card] = models.json()["data"]
    assert (card["id"], card["freyr_source"]) == ("weather", str(path.resolve()))
