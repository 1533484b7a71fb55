"""Catalog-typed outputs: the contract mechanism and how freyr's adapters send or state it.

Per call, a role's output schema comes from what it may name. A backend that enforces JSON
schemas gets it as ``response_format`` and the prompt is unchanged; any other backend (and the
chat adapter) reads it in the prompt. Parsing, demos and the predictor's state stay as declared.
"""

from __future__ import annotations

import json
from typing import Any

import dspy
import pytest

from freyr_dspy.backends import LlamaCppEngine, make_lm
from freyr_dspy.errors import ConfigError
from freyr_dspy.prompting._adapters import FreyrChatAdapter, FreyrJSONAdapter, LeanAdapter
from freyr_dspy.prompting._contracts import (
    contract_of,
    enforces_schema,
    is_strict,
    json_text_fields,
    name_schema,
    names_schema,
    output_schema,
    pattern_literal,
    response_format,
    with_contract,
)
from freyr_dspy.roles import (
    ChatResponder,
    ChatSignature,
    IntentClassifier,
    IntentSignature,
    intent_contract,
)
from freyr_dspy.roles._signature_dump import dump_signature
from freyr_dspy.testing import FakeCall, FunctionLM

CONTRACT = intent_contract(["math.hypot", "get-weather"], 8)
INPUTS = {
    "conversation": "(none)",
    "message": "how long is the diagonal of a 3 by 4 screen?",
    "tools": "- math.hypot: hypotenuse\n- get-weather: weather",
    "state": "{}",
}


def sent_schema(call: FakeCall) -> dict[str, Any] | None:
    """The JSON schema a call sent as its response format (None: no schema was sent)."""
    fmt = call.config.response_format
    if not fmt or fmt.get("type") != "json_schema":
        return None
    schema: dict[str, Any] = fmt.get("json_schema", fmt)["schema"]
    return schema


def run_intent(
    adapter: dspy.Adapter, *, structured: bool, contract: Any = CONTRACT, answer: Any = None
) -> tuple[dspy.Prediction, FunctionLM]:
    engine = FunctionLM(
        lambda call: answer or {"intents": ["math.hypot"]}, structured_output=structured
    )
    role = IntentClassifier()
    role.set_lm(dspy.LM("fake/contract", engine=engine, cache=False))
    with dspy.context(adapter=adapter):
        return role(contract=contract, **INPUTS), engine


# --------------------------------------------------------------------------- the mechanism


def test_names_are_kept_exactly_once_in_order() -> None:
    assert names_schema(["b.x", "a-y", "b.x"], max_items=3) == {
        "type": "array",
        "items": {"type": "string", "enum": ["b.x", "a-y"]},
        "maxItems": 3,
    }
    assert name_schema(["z", "a"]) == {"type": "string", "enum": ["z", "a"]}
    assert CONTRACT["intents"]["items"]["enum"] == ["math.hypot", "get-weather", "conversation"]


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("math.hypot", "math[.]hypot"),
        ("get-weather", "get-weather"),
        ("Website information", "Website information"),
        ("f(x) + g[y]?", "f\\(x\\) \\+ g\\[y\\]\\?"),
        ("cost $", "cost [$]"),
        ('say "hi"', None),
        ("a\\b", None),
        ("x^2", None),
    ],
)
def test_pattern_literals_avoid_escapes_llama_cpp_refuses(name: str, pattern: str | None) -> None:
    assert pattern_literal(name) == pattern


def test_a_contract_travels_in_a_per_call_signature() -> None:
    typed = with_contract(IntentSignature, CONTRACT)
    assert with_contract(IntentSignature, dict(CONTRACT)) is typed  # built once per catalog
    assert contract_of(typed) == CONTRACT and contract_of(IntentSignature) == {}
    # Annotations, descriptions and instructions are the declared ones.
    assert dump_signature(typed)["fields"] == dump_signature(IntentSignature)["fields"]
    assert typed.instructions == IntentSignature.instructions
    with pytest.raises(ConfigError, match="unknown output field"):
        with_contract(IntentSignature, {"tools": {"type": "string"}})


def test_the_output_object_is_closed_and_requires_every_field() -> None:
    schema = output_schema(with_contract(IntentSignature, CONTRACT))
    assert schema == {
        "type": "object",
        "properties": {"intents": CONTRACT["intents"]},
        "required": ["intents"],
        "additionalProperties": False,
    }
    fmt = response_format(with_contract(IntentSignature, CONTRACT))
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True


@pytest.mark.parametrize(
    ("schema", "strict"),
    [
        ({"type": "string", "enum": ["a"]}, True),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            True,
        ),
        ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": []}, False),
        ({"type": "object", "properties": {}, "required": [], "additionalProperties": True}, False),
        ({"type": "integer", "default": 1}, False),
        ({"type": "array"}, False),
        ({}, False),
        ({"anyOf": [{"type": "string"}, {"type": "object"}]}, False),
    ],
)
def test_strict_only_where_openai_takes_the_schema_unchanged(
    schema: dict[str, Any], strict: bool
) -> None:
    assert is_strict(schema) is strict


def test_which_backends_enforce_a_schema() -> None:
    def fake(structured: bool) -> dspy.LM:
        engine = FunctionLM(lambda call: None, structured_output=structured)
        return dspy.LM("fake/x", engine=engine)

    assert enforces_schema(fake(True)) and not enforces_schema(fake(False))
    assert enforces_schema(dspy.LM("embedded/x", engine=LlamaCppEngine("/nonexistent.gguf")))
    assert enforces_schema(make_lm("ollama_chat/qwen2.5:7b"))  # litellm passes it as `format`
    assert enforces_schema(make_lm("openai/gpt-4o-mini"))
    # llama_cpp.server ignores OpenAI's json_schema format: the schema goes into the prompt.
    assert not enforces_schema(make_lm("hosted_vllm/x", api_base="http://127.0.0.1:1/v1"))


# --------------------------------------------------------------------------- the adapters


def test_an_enforcing_backend_gets_the_schema_and_an_unchanged_prompt() -> None:
    prediction, engine = run_intent(FreyrJSONAdapter(), structured=True)
    _, plain = run_intent(FreyrJSONAdapter(), structured=True, contract=None)
    [call], [without] = engine.calls, plain.calls
    assert sent_schema(call) == output_schema(with_contract(IntentSignature, CONTRACT))
    assert call.config.response_format["strict"] is True
    assert call.prompt == without.prompt  # byte for byte: the prefix cache is not disturbed
    assert "Constraints:" not in call.prompt
    assert prediction.intents == ["math.hypot"] and prediction.parsed_ok


@pytest.mark.parametrize(
    ("adapter", "structured"),
    [(FreyrJSONAdapter(), False), (FreyrChatAdapter(), False), (FreyrChatAdapter(), True)],
    ids=["json-unstructured", "chat", "chat-structured"],
)
def test_otherwise_the_schema_is_stated_in_the_prompt(
    adapter: dspy.Adapter, structured: bool
) -> None:
    prediction, engine = run_intent(adapter, structured=structured)
    [call] = engine.calls
    assert sent_schema(call) is None
    stated = json.dumps(CONTRACT["intents"])
    assert f"Constraints: must adhere to the JSON schema: {stated}" in call.prompt
    assert prediction.intents == ["math.hypot"] and prediction.parsed_ok


def test_dspy_adapters_ignore_contracts() -> None:
    _, engine = run_intent(dspy.JSONAdapter(), structured=False)
    _, plain = run_intent(dspy.JSONAdapter(), structured=False, contract=None)
    assert engine.calls[0].prompt == plain.calls[0].prompt


def test_a_name_outside_the_catalog_still_reaches_the_tolerant_parser() -> None:
    # A server that ignores the schema: the fake answers a name no catalog has.
    answer = {"intents": ["Math.Hypot", "order_pizza"]}
    prediction, _ = run_intent(FreyrJSONAdapter(), structured=True, answer=answer)
    assert prediction.intents == ["Math.Hypot", "order_pizza"] and prediction.parsed_ok


def test_the_chat_adapters_json_retry_sends_the_schema_and_the_raw_text_is_still_read() -> None:
    raw = "I would call:\n- math.hypot"
    prediction, engine = run_intent(FreyrChatAdapter(), structured=True, answer=raw)
    chat, retry = engine.calls
    assert sent_schema(chat) is None and sent_schema(retry) is not None
    assert not prediction.parsed_ok and "math.hypot" in prediction.intents


def test_the_predictor_is_never_changed() -> None:
    role = IntentClassifier()
    before = role.dump_state()
    engine = FunctionLM(lambda call: {"intents": ["math.hypot"]}, structured_output=True)
    role.set_lm(dspy.LM("fake/contract", engine=engine, cache=False))
    with dspy.context(adapter=FreyrJSONAdapter()):
        role(contract=CONTRACT, **INPUTS)
        role(contract=intent_contract(["other"], 2), **INPUTS)
    assert role.predict.signature is IntentSignature
    role.set_lm(None)
    assert role.dump_state() == before
    assert [sent_schema(c)["properties"]["intents"]["items"]["enum"] for c in engine.calls] == [  # type: ignore[index]
        ["math.hypot", "get-weather", "conversation"],
        ["other", "conversation"],
    ]


# --------------------------------------------------------------------------- JSON in a text field


def test_a_text_field_held_to_an_object_schema_is_its_json_kept_as_written() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    answer = {"reply": {"city": "Paris", "note": "```no fences```"}}
    engine = FunctionLM(lambda call: answer, structured_output=True)
    role = ChatResponder()
    role.set_lm(dspy.LM("fake/contract", engine=engine, cache=False))
    inputs = {"conversation": "(none)", "message": "where?", "state": "(none)"}
    for adapter in (FreyrJSONAdapter(), LeanAdapter()):
        with dspy.context(adapter=adapter):
            prediction = role(contract={"reply": schema}, **inputs)
        # JSON, not Python's repr, and not read as prose (whose cleaning unwraps objects)
        assert json.loads(prediction.reply) == answer["reply"] and prediction.parsed_ok
    assert sent_schema(engine.calls[-1])["properties"]["reply"] == schema
    assert json_text_fields(with_contract(ChatSignature, {"reply": schema})) == ["reply"]
    assert json_text_fields(with_contract(ChatSignature, {"reply": {"type": "string"}})) == []
