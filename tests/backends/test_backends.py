"""``make_lm`` and the llama.cpp engine's request/response conversion (no model loaded)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import dspy
import pytest
from dspy.lm15 import FunctionTool, Message, Request

from freyr_dspy.backends import (
    EMBEDDED_MODELS,
    LlamaCppEngine,
    make_lm,
    model_path,
    register_embedded_model,
)
from freyr_dspy.backends._embedded import shared_engine
from freyr_dspy.backends._llamacpp import tool_format_of
from freyr_dspy.errors import ConfigError, UnknownModelError
from freyr_dspy.prompting import LeanAdapter
from freyr_dspy.roles import ChatResponder, IntentClassifier
from freyr_dspy.schemas import Sampling
from freyr_dspy.settings import FAST_MODEL, Settings
from freyr_dspy.text_stream import listening
from tests.support.stub_llama import stub_engine

SAMPLING = Sampling(temperature=0.8, top_p=0.6, top_k=20, max_tokens=100, seed=3)


@pytest.mark.parametrize(
    ("model_id", "suggestion"),
    [
        ("embedded/smollm2", "embedded/smollm2-135m"),
        ("opnai/gpt-4o-mini", "openai/"),
        ("olama_chat/qwen2.5:7b", "ollama_chat/"),
        ("hosted_vlm/x", "hosted_vllm/"),
        ("gpt-4o", "openai/gpt-4o"),
    ],
)
def test_unknown_ids_suggest_the_closest(model_id: str, suggestion: str) -> None:
    with pytest.raises(UnknownModelError) as info:
        make_lm(model_id)
    assert f"unknown model id {model_id!r}" in str(info.value)
    assert "Did you mean" in str(info.value) and repr(suggestion) in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_sampling_reaches_remote_lms() -> None:
    openai = make_lm("openai/gpt-4o-mini", SAMPLING)
    assert openai.kwargs == {"temperature": 0.8, "top_p": 0.6, "max_tokens": 100, "seed": 3}
    assert openai.cache is False
    ollama = make_lm("ollama_chat/qwen2.5:7b", SAMPLING)
    assert ollama.kwargs["top_k"] == 20  # Ollama has top_k; OpenAI does not
    assert ollama.kwargs["num_ctx"] == 8192
    assert ollama.kwargs["api_base"] == "http://localhost:11434"
    local = make_lm("hosted_vllm/smollm2", api_base="http://127.0.0.1:8000/v1")
    assert local.kwargs["api_base"] == "http://127.0.0.1:8000/v1"
    assert local.kwargs["api_key"] == "none"
    assert make_lm("openai/gpt-4o-mini", cache=True).cache is True


def test_embedded_lm_shares_one_lazy_engine() -> None:
    lm = make_lm("embedded/smollm2-135m", SAMPLING)
    other = make_lm("embedded/smollm2-135m")
    assert isinstance(lm.engine, LlamaCppEngine)  # type: ignore[attr-defined]
    assert lm.engine is other.engine is shared_engine("embedded/smollm2-135m")  # type: ignore[attr-defined]
    assert lm.kwargs["top_k"] == 20 and lm.kwargs["seed"] == 3
    assert other.kwargs["max_tokens"] == 512  # a default cap: small models ramble
    assert model_path("embedded/smollm2-135m").suffix == ".gguf"
    assert lm.engine.n_ctx >= 4096  # type: ignore[attr-defined]


def test_every_embedded_model_has_an_install_hint_and_a_license() -> None:
    for model in EMBEDDED_MODELS.values():
        assert model.install_hint.startswith("pip install")
        assert "Apache-2.0" in model.license and model.size > 0


def test_the_default_is_the_capable_qwen_and_the_fast_model_its_small_sibling() -> None:
    assert Settings().default_model == "embedded/qwen2.5-coder-1.5b" in EMBEDDED_MODELS
    assert FAST_MODEL == "embedded/qwen2.5-coder-0.5b" in EMBEDDED_MODELS


def test_missing_package_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from freyr_dspy.backends import _embedded as embedded

    missing = embedded.PackagedFile("no_such_pkg_xyz", "no-such-pkg-xyz==1.0", "m.gguf")
    model = EMBEDDED_MODELS["embedded/smollm2-135m"]
    monkeypatch.setitem(EMBEDDED_MODELS, model.model_id, dataclasses.replace(model, source=missing))
    with pytest.raises(
        ConfigError, match=r"embedded/smollm2-135m: .*pip install 'no-such-pkg-xyz==1.0'"
    ):
        model_path("embedded/smollm2-135m")
    assert not embedded.is_installed("embedded/smollm2-135m")


def test_gguf_ids_run_any_local_file(tmp_path: Path) -> None:
    smol = model_path("embedded/smollm2-135m")
    lm = make_lm(f"gguf:{smol}")
    assert isinstance(lm.engine, LlamaCppEngine)  # type: ignore[attr-defined]
    assert lm.engine.n_ctx is None  # type: ignore[attr-defined]  # from the file, capped
    with pytest.raises(ConfigError, match="no such GGUF file"):
        make_lm(f"gguf:{tmp_path / 'absent.gguf'}")


def test_registering_an_embedded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from freyr_dspy.backends import _embedded as embedded

    monkeypatch.setattr(embedded, "EMBEDDED_MODELS", dict(EMBEDDED_MODELS))
    smol = EMBEDDED_MODELS["embedded/smollm2-135m"]
    register_embedded_model(dataclasses.replace(smol, model_id="embedded/my-model"))
    assert embedded.model_path("embedded/my-model") == model_path("embedded/smollm2-135m")
    with pytest.raises(ConfigError, match="start with 'embedded/'"):
        register_embedded_model(dataclasses.replace(smol, model_id="mine"))


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{% if tools %}<tool_call>{% endif %}<|im_start|>", "template"),
        ("<|im_start|>{{ message.content }}", "chatml-function-calling"),
        ("[INST] {{ message.content }} [/INST]", None),
        (None, None),
    ],
)
def test_tool_format_follows_the_chat_template(template: str | None, expected: str | None) -> None:
    assert tool_format_of(template) == expected


INTENT_INPUTS = {
    "conversation": "(none)",
    "message": "add milk",
    "tools": "- add_task: Add.",
    "state": "empty",
}


def test_engine_turns_the_json_schema_into_a_grammar_and_reports_usage() -> None:
    engine, stub = stub_engine({"role": "assistant", "content": '{"intents": ["add_task"]}'})
    role = IntentClassifier()
    role.set_lm(dspy.LM("embedded/stub", engine=engine, cache=False, temperature=0.5, top_k=7))
    with dspy.context(adapter=dspy.JSONAdapter()), dspy.track_usage() as tracker:
        prediction = role(**INTENT_INPUTS)
    assert prediction.intents == ["add_task"] and prediction.parsed_ok
    [request] = stub.requests
    grammar = request["grammar"]._grammar  # the schema as a grammar (newlines allowed)
    assert '"\\"intents\\""' in grammar and 'space ::= | " " | "\\n"' in grammar
    assert (request["temperature"], request["top_k"], request["seed"]) == (0.5, 7, 11)
    assert request["messages"][0]["role"] == "system"
    assert (
        request["messages"][-1]["role"] == "user"
        and "add milk" in request["messages"][-1]["content"]
    )
    [usage] = tracker.usage_data["embedded/stub"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (123, 7)
    assert usage["prompt_tokens_details"]["cached_tokens"] == 100
    assert (engine.prompt_tokens_sent, engine.prompt_tokens_evaluated) == (123, 23)


def test_engine_defaults_temperature_zero_and_a_token_cap() -> None:
    engine, stub = stub_engine({"role": "assistant", "content": '{"intents": []}'})
    role = IntentClassifier()
    role.set_lm(dspy.LM("embedded/stub", engine=engine, cache=False))
    with dspy.context(adapter=dspy.JSONAdapter()):
        role(**INTENT_INPUTS)
    request = stub.requests[0]
    assert request["temperature"] == 0.0 and request["seed"] == 11
    assert request["max_tokens"] == 512
    assert "top_p" not in request and "top_k" not in request


def test_engine_forces_a_single_tool_and_repairs_truncated_arguments() -> None:
    def get_weather(city: str) -> str:
        """Weather of a city."""
        return "sunny"

    class Ask(dspy.Signature):
        """Use the tool."""

        question: str = dspy.InputField()
        tools: list[dspy.Tool] = dspy.InputField()
        calls: dspy.ToolCalls = dspy.OutputField()

    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Par'},
            }
        ],
    }
    engine, stub = stub_engine(message, finish_reason="tool_calls")
    lm = dspy.LM("embedded/stub", engine=engine, cache=False)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter(use_native_function_calling=True)):
        prediction = dspy.Predict(Ask)(question="weather?", tools=[dspy.Tool(get_weather)])
    [call] = prediction.calls.tool_calls
    assert (call.name, call.args) == ("get_weather", {"city": "Par"})
    request = stub.requests[0]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert request["tools"][0]["function"]["name"] == "get_weather"


def test_engine_state_round_trips() -> None:
    engine = LlamaCppEngine("/models/x.gguf", n_ctx=8192, seed=4)
    rebuilt = LlamaCppEngine.load_state(engine.dump_state())
    assert (rebuilt.model_path, rebuilt.n_ctx, rebuilt.seed) == ("/models/x.gguf", 8192, 4)


def test_engine_streams_text_to_a_listener_and_answers_the_same() -> None:
    answer = '{"reply": "Hello there"}'
    engine, stub = stub_engine({"role": "assistant", "content": answer})
    role = ChatResponder()
    role.set_lm(dspy.LM("embedded/stub", engine=engine, cache=False))
    heard: list[str] = []
    inputs = {"conversation": "(none)", "message": "hi", "state": "(none)"}
    with dspy.context(adapter=LeanAdapter()), dspy.track_usage() as tracker:
        with listening(heard.append):
            streamed = role(**inputs)
        whole = role(**inputs)
    assert "".join(heard) == answer and len(heard) > 3  # as the chunks came
    assert streamed.reply == whole.reply == "Hello there"
    assert [r.get("stream", False) for r in stub.requests] == [True, False]
    first, second = tracker.usage_data["embedded/stub"]
    assert first == second  # the streamed call's usage counts as the whole call's


def test_a_call_with_tools_is_never_streamed() -> None:
    engine, stub = stub_engine({"role": "assistant", "content": "{}"})
    request = Request(
        model="embedded/stub",
        messages=(Message.user("weather in Oslo?"),),
        tools=(FunctionTool(name="get_weather", description="", parameters={"type": "object"}),),
    )
    heard: list[str] = []
    with listening(heard.append):
        engine.complete(request)
    assert heard == [] and "stream" not in stub.requests[0]
