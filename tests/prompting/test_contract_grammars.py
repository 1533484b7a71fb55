"""Role contracts become llama.cpp grammars that accept what the contract allows, and no more.

Each contract goes the real way - role, FreyrJSONAdapter, DSPy, the llama.cpp engine - to a
stub in place of the model, which records the grammar. No model is loaded: llama.cpp's own
parser checks the grammar text (with no vocabulary), and ``tests/gbnf.py`` checks which answers
it accepts. Names with dots and dashes, enums, nested objects and arrays, ``$ref``s and
``maxItems`` are covered, and generated tool schemas round-trip (hypothesis).
"""

from __future__ import annotations

import json
import re
from typing import Any

import dspy
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freyr_dspy.backends._llamacpp_grammar import without_patterns
from freyr_dspy.backends._llamacpp_messages import _structured_output
from freyr_dspy.benchmarks.callnavi._roles import (
    final_call_contract,
    missing_inputs_contract,
    router_contract,
    single_call_contract,
    supporting_call_contract,
)
from freyr_dspy.domains._example import make_todo_toolbox
from freyr_dspy.prompting._adapters import FreyrJSONAdapter
from freyr_dspy.prompting._contracts import Contract, response_format, with_contract
from freyr_dspy.roles import (
    ParametersSignature,
    intent_contract,
    library_contract,
    load_roles,
    parameters_contract,
)
from freyr_dspy.roles._tool_selection import parse_assessment, selection_contract
from freyr_dspy.tools import Tool, normalize_name
from tests.support.gbnf import Grammar, parses_in_llama_cpp
from tests.support.role_samples import sample_inputs
from tests.support.stub_llama import stub_engine

ORDER = Tool.from_json_schema(
    "create-order",
    "Order items to an address.",
    {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "maxItems": 2},
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["city"],
            },
            "speed": {"type": "string", "enum": ["slow", "fast-track", "v1.2"], "default": "slow"},
            "gift": {"type": "boolean", "default": False},
        },
        "required": ["items", "address"],
        "$defs": {
            "item": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
            }
        },
    },
)
ADD_TASK = make_todo_toolbox().get("add_task")
NL = "\n"  # llama.cpp writes a pattern's newline raw into the JSON string; json_repair reads it


def engine_grammar(role_id: str, contract: Contract, answer: str) -> tuple[str, dspy.Prediction]:
    """Run a role with ``contract`` on the llama.cpp engine (stubbed); return its grammar."""
    engine, stub = stub_engine({"role": "assistant", "content": answer})
    role = load_roles()[role_id]()
    role.set_lm(dspy.LM("embedded/stub", engine=engine, cache=False))
    with dspy.context(adapter=FreyrJSONAdapter()):
        prediction = role(contract=contract, **sample_inputs(role.signature))
    [request] = stub.requests
    grammar: str = request["grammar"]._grammar
    return grammar, prediction


CASES: list[tuple[str, Contract, list[str], list[str]]] = [
    (
        "intent",
        intent_contract(["math.hypot", "get-weather"], 3),
        [
            '{"intents": ["math.hypot", "conversation"]}',
            '{"intents": []}',
            json.dumps({"intents": ["get-weather", "get-weather"]}),
        ],
        [
            '{"intents": ["math_hypot"]}',
            '{"intents": ["get-weather", "get-weather", "math.hypot", "conversation"]}',
            '{"intents": ["get-weather"], "why": "rain"}',
            '{"intents": "get-weather"}',
        ],
    ),
    (
        "parameters",
        parameters_contract(ORDER),
        [
            '{"arguments": {"items": [{"sku": "A1", "qty": 2}], "address": {"city": "Oslo"}}}',
            json.dumps(
                {
                    "arguments": {
                        "items": [{"sku": "A1", "qty": 2}, {"sku": "B-2", "qty": 1}],
                        "address": {"city": "Oslo", "zip": "0150"},
                        "speed": "v1.2",
                        "gift": True,
                    }
                },
            ),
        ],
        [
            '{"arguments": {"items": [{"sku": "A1", "qty": 2}]}}',
            '{"arguments": {"items": [{"sku": "A1", "qty": "two"}], "address": {"city": "O"}}}',
            '{"arguments": {"items": [], "address": {"city": "O"}, "speed": "medium"}}',
            '{"arguments": {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 1}, '
            '{"sku": "C", "qty": 1}], "address": {"city": "O"}}}',
            '{"arguments": {"items": [], "address": {"city": "O"}, "note": "hi"}}',
            '{"arguments": {"give_up": "no such sku"}}',
        ],
    ),
    (
        "parameters",
        parameters_contract(ORDER, may_give_up=True),
        [
            '{"arguments": {"give_up": "no such sku"}}',
            '{"arguments": {"items": [], "address": {"city": "Oslo"}}}',
        ],
        ['{"arguments": {"give_up": 3}}', '{"arguments": {"give_up": "x", "items": []}}'],
    ),
    (
        "intent",
        intent_contract(['say "hi"', "back\\slash", "tab\there"], 2),
        ['{"intents": ["say \\"hi\\"", "back\\\\slash"]}', '{"intents": ["tab\\there"]}'],
        ['{"intents": ["say hi"]}', '{"intents": ["back\\slash"]}'],
    ),
    (
        "parameters",
        parameters_contract(ADD_TASK),
        ['{"arguments": {"title": "buy milk", "priority": 2}}', '{"arguments": {"title": "x"}}'],
        ['{"arguments": {"priority": 2}}', '{"arguments": {"title": "x", "priority": "high"}}'],
    ),
    (
        "tool_selection",
        selection_contract(["math.hypot", "get-weather", "Website information"]),
        [
            '{"thinking": "weather", "assessment": "math.hypot -- NO'
            + NL
            + "get-weather -- YES"
            + NL
            + "Website information -- NO"
            + NL
            + 'Assessment finished."}'
        ],
        [
            # the JSON-escaped newline is not what llama.cpp's pattern converter generates
            '{"thinking": "x", "assessment": "math.hypot -- NO\\nget-weather -- YES\\n'
            'Website information -- NO\\nAssessment finished."}',
            '{"thinking": "x", "assessment": "get-weather -- YES' + NL + 'Assessment finished."}',
            '{"thinking": "x", "assessment": "math.hypot -- MAYBE'
            + NL
            + "get-weather -- YES"
            + NL
            + "Website information -- NO"
            + NL
            + 'Assessment finished."}',
        ],
    ),
    (
        "library",
        library_contract(["billing", "shipping.eu"]),
        ['{"selected": ["shipping.eu", "billing"]}', '{"selected": ["none"]}'],
        ['{"selected": ["marketing"]}', '{"selected": ["billing", "billing", "none", "none"]}'],
    ),
    (
        "router",
        router_contract(["getOwnerID", "get-pet.list"], 2),
        ['{"apis": ["getOwnerID", "get-pet.list"]}'],
        ['{"apis": ["getOwnerId"]}', '{"apis": ["getOwnerID", "getOwnerID", "getOwnerID"]}'],
    ),
    (
        "single",
        single_call_contract(
            [
                Tool.from_json_schema(
                    "getOwnerID", "", {"properties": {"name": {}}, "required": ["name"]}
                ),
                Tool.from_json_schema("listPets", "", {"properties": {}}),
            ],
            2,
        ),
        [
            '{"API": ["getOwnerID", "listPets"], "parameters": [{"name": "$$$"}, {}]}',
            '{"API": ["getOwnerID"], "parameters": [{"name": 7}]}',
        ],
        [
            '{"API": ["getOwnerID"], "parameters": [{"owner": "Ann"}]}',
            '{"API": ["getOwnerID"], "parameters": [{}, {}, {}]}',
            '{"API": ["getOwnerId"], "parameters": [{}]}',
        ],
    ),
    (
        "final_call",
        final_call_contract(["getOwnerID", "registerPet"]),
        ['{"final_api": "registerPet"}'],
        ['{"final_api": "register"}', '{"final_api": ["registerPet"]}'],
    ),
    (
        "missing_inputs",
        missing_inputs_contract(["ownerID", "petDetails"]),
        ['{"missing": ["ownerID"]}', '{"missing": []}'],
        ['{"missing": ["name"]}'],
    ),
    (
        "supporting_call",
        supporting_call_contract(["getOwnerID"], "none"),
        ['{"supporting_api": "none"}', '{"supporting_api": "getOwnerID"}'],
        ['{"supporting_api": "registerPet"}'],
    ),
]


@pytest.mark.parametrize(
    ("role_id", "contract", "valid", "invalid"),
    CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)],
)
def test_the_grammar_accepts_exactly_what_the_contract_allows(
    role_id: str, contract: Contract, valid: list[str], invalid: list[str]
) -> None:
    grammar, prediction = engine_grammar(role_id, contract, valid[0])
    assert parses_in_llama_cpp(grammar), grammar
    parsed = Grammar(grammar)
    for text in valid:
        assert parsed.accepts(text), text
    for text in invalid:
        assert not parsed.accepts(text), text
    assert prediction.parsed_ok  # the first valid answer, as the model wrote it, is read


def test_answers_may_indent_by_default_as_a_small_model_writes_json() -> None:
    answer = {"intents": ["get-weather"]}
    grammar, _ = engine_grammar("intent", intent_contract(["get-weather"], 2), json.dumps(answer))
    assert Grammar(grammar).accepts(json.dumps(answer, indent=2))


def compact_grammar(demos: list[dspy.Example]) -> Grammar:
    """The intent role's grammar on an engine told to keep answers on one line."""
    engine, stub = stub_engine({"role": "assistant", "content": '{"intents": ["get-weather"]}'})
    engine.compact_json = True
    role = load_roles()["intent"]()
    role.set_lm(dspy.LM("embedded/stub", engine=engine, cache=False))
    role.predict.demos = demos
    with dspy.context(adapter=FreyrJSONAdapter()):  # DSPy's JSON adapter indents demos
        role(contract=intent_contract(["get-weather"], 2), **sample_inputs(role.signature))
    return Grammar(stub.requests[0]["grammar"]._grammar)


def test_a_compact_engine_keeps_the_answer_on_one_line() -> None:
    """Line breaks and indentation are tokens the model must generate; none are needed."""
    answer = {"intents": ["get-weather"]}
    grammar = compact_grammar([])
    assert grammar.accepts(json.dumps(answer))
    assert not grammar.accepts(json.dumps(answer, indent=2))


def test_indented_demos_let_even_a_compact_engine_indent_like_them() -> None:
    """A model imitating indented demos, refused the line break, closed its lists early."""
    demo = {**sample_inputs(load_roles()["intent"].signature), "intents": ["get-weather"]}
    grammar = compact_grammar([dspy.Example(**demo)])
    assert grammar.accepts(json.dumps({"intents": ["get-weather"]}, indent=2))


def test_the_selection_written_under_the_grammar_is_read_as_verdicts() -> None:
    names = ["math.hypot", "get-weather", "Website information"]
    answer = next(valid[0] for role, _, valid, _ in CASES if role == "tool_selection")
    _, prediction = engine_grammar("tool_selection", selection_contract(names), answer)
    assert parse_assessment(prediction.assessment, names).selected == ("get-weather",)


def test_a_schema_llama_cpp_cannot_translate_falls_back_to_plain_json() -> None:
    schema = {"type": "object", "properties": {"x": {"not": {"type": "string"}}}}
    tool = Tool.from_json_schema("odd", "An odd schema.", schema)
    fmt = response_format(with_contract(ParametersSignature, parameters_contract(tool)))
    assert _structured_output(fmt) == {"response_format": {"type": "json_object"}}


def test_regex_patterns_llama_cpp_cannot_take_are_dropped_and_the_rest_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "year": {"type": "string", "pattern": "^\\d{4}$"},
            "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"},
            "pattern": {"type": "string", "enum": ["a.b"]},
        },
        "required": ["year", "code", "pattern"],
    }
    assert without_patterns(schema)["properties"] == {
        "year": {"type": "string"},
        "code": {"type": "string"},
        "pattern": {"type": "string", "enum": ["a.b"]},
    }
    tool = Tool.from_json_schema("dated", "Patterns.", schema)
    grammar = grammar_of(ParametersSignature, parameters_contract(tool))
    # \d has no GBNF form: the whole schema is tried again without its patterns.
    assert grammar.accepts('{"arguments": {"year": "soon", "code": "ab", "pattern": "a.b"}}')
    assert not grammar.accepts('{"arguments": {"year": "2025", "code": "AB-1", "pattern": "x"}}')
    tool = Tool.from_json_schema(
        "coded",
        "Pattern.",
        {**schema, "properties": {"code": schema["properties"]["code"]}, "required": ["code"]},
    )
    grammar = grammar_of(ParametersSignature, parameters_contract(tool))
    assert grammar.accepts('{"arguments": {"code": "AB-12"}}')
    assert not grammar.accepts('{"arguments": {"code": "ab-12"}}')


# --------------------------------------------------------------------------- generated


NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,10}", fullmatch=True)
SPACED_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9 _.-]{0,10}[A-Za-z0-9]", fullmatch=True)
#: NOTE: no DEL: json.dumps writes it raw, while the grammar (like llama.cpp's) takes it escaped.
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x7f"), max_size=8)


def grammar_of(signature: type[dspy.Signature], contract: Contract) -> Grammar:
    """The engine's grammar for a contract (the path ``engine_grammar`` takes, minus DSPy)."""
    text = _structured_output(response_format(with_contract(signature, contract)))["grammar"]
    assert parses_in_llama_cpp(text._grammar)
    return Grammar(text._grammar)


@settings(max_examples=25, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=6, unique=True), data=st.data())
def test_any_catalog_types_the_intents(names: list[str], data: st.DataObject) -> None:
    grammar = grammar_of(load_roles()["intent"].signature, intent_contract(names, 4))
    picked = data.draw(st.lists(st.sampled_from([*names, "conversation"]), max_size=4))
    assert grammar.accepts(json.dumps({"intents": picked}))
    outside = data.draw(NAMES.filter(lambda n: n not in names and n != "conversation"))
    assert not grammar.accepts(json.dumps({"intents": [outside]}))
    assert not grammar.accepts(json.dumps({"intents": [names[0]] * 5}))


@settings(max_examples=25, deadline=None)
@given(names=st.lists(TEXT.filter(bool), min_size=1, max_size=4, unique=True), data=st.data())
def test_any_text_can_be_a_name(names: list[str], data: st.DataObject) -> None:
    # Quotes and backslashes broke llama-cpp-python's literals; the converter escapes them.
    grammar = grammar_of(load_roles()["intent"].signature, intent_contract(names, 4))
    picked = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    # NOTE: enum values are written as json.dumps writes them: non-ASCII as \u escapes.
    assert grammar.accepts(json.dumps({"intents": picked}))
    assert not grammar.accepts(json.dumps({"intents": [picked[0] + "x"]})) or (
        picked[0] + "x" in names
    )


@settings(max_examples=25, deadline=None)
# NOTE: names a toolbox tells apart: it matches model-written names ignoring case and spacing
@given(
    names=st.lists(SPACED_NAMES, min_size=1, max_size=5, unique_by=normalize_name),
    data=st.data(),
)
def test_any_catalog_types_the_assessment(names: list[str], data: st.DataObject) -> None:
    contract = selection_contract(names)
    grammar = grammar_of(load_roles()["tool_selection"].signature, contract)
    verdicts = data.draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    lines = [f"{n} -- {'YES' if yes else 'NO'}" for n, yes in zip(names, verdicts, strict=True)]
    assessment = "\n".join([*lines, "Assessment finished."])
    assert re.fullmatch(contract["assessment"]["pattern"][1:-1], assessment)
    raw = json.dumps({"thinking": "t", "assessment": assessment}).replace("\\n", NL)
    assert grammar.accepts(raw)
    selected = parse_assessment(assessment, names).selected
    assert selected == tuple(n for n, yes in zip(names, verdicts, strict=True) if yes)


Pair = tuple[dict[str, Any], st.SearchStrategy[Any]]


def _leaves() -> st.SearchStrategy[Pair]:
    enums = st.lists(NAMES, min_size=1, max_size=4, unique=True)
    return st.one_of(
        st.just(({"type": "string", "description": "text"}, TEXT)),
        st.just(({"type": "integer"}, st.integers(-(10**6), 10**6))),
        # NOTE: llama.cpp's number rule has no exponent with a leading zero (1e-05): eighths.
        st.just(({"type": "number"}, st.integers(-(10**6), 10**6).map(lambda i: i / 8))),
        st.just(({"type": "boolean", "default": False}, st.booleans())),
        enums.map(lambda e: ({"type": "string", "enum": e, "default": e[0]}, st.sampled_from(e))),
    )


def _array(item: Pair, max_items: int) -> Pair:
    schema, values = item
    return {"type": "array", "items": schema, "maxItems": max_items}, st.lists(
        values, max_size=max_items
    )


def _object(children: dict[str, Pair], required: list[str]) -> Pair:
    properties = {name: schema for name, (schema, _) in children.items()}
    order = list(children)
    schema = {"type": "object", "properties": properties, "required": required}
    values = st.fixed_dictionaries(
        {k: v for k, (_, v) in children.items() if k in required},
        optional={k: v for k, (_, v) in children.items() if k not in required},
    )
    # The grammar writes required properties first, then optional ones, each in declared order.
    rank = {k: (k not in required, order.index(k)) for k in order}
    return schema, values.map(lambda d: dict(sorted(d.items(), key=lambda kv: rank[kv[0]])))


def _objects(values: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    keys = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
    children = st.dictionaries(keys, values, min_size=1, max_size=4)
    return children.flatmap(
        lambda ch: st.lists(st.sampled_from(list(ch)), unique=True).map(
            lambda req: _object(ch, sorted(req, key=list(ch).index))
        )
    )


VALUES = st.recursive(
    _leaves(),
    lambda inner: st.one_of(
        st.tuples(inner, st.integers(1, 3)).map(lambda p: _array(*p)), _objects(inner)
    ),
    max_leaves=6,
)
TOOL_SCHEMAS = _objects(VALUES)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_tool_schemas_round_trip_through_the_grammar(data: st.DataObject) -> None:
    schema, values = data.draw(TOOL_SCHEMAS)
    tool = Tool.from_json_schema("gen.tool-1", "A generated tool.", schema)
    grammar = grammar_of(ParametersSignature, parameters_contract(tool))
    arguments = data.draw(values)
    jsonschema.validate(arguments, schema)
    assert grammar.accepts(json.dumps({"arguments": arguments}, ensure_ascii=False))
    assert grammar.accepts(json.dumps({"arguments": arguments}, ensure_ascii=False, indent=2))
    if schema["required"]:
        missing = {k: v for k, v in arguments.items() if k != schema["required"][0]}
        assert not grammar.accepts(json.dumps({"arguments": missing}, ensure_ascii=False))


def test_strings_take_no_raw_control_character_only_escaped_ones() -> None:
    """JSON forbids a raw newline or tab in a string; the grammar must too (it wrote them)."""
    from freyr_dspy.backends import schema_grammar

    grammar = schema_grammar(
        json.dumps({"type": "object", "properties": {"body": {"type": "string"}}})
    )
    assert grammar is not None and parses_in_llama_cpp(grammar)
    accepts = Grammar(grammar).accepts
    assert accepts('{"body": "line one\\nline two\\ttabbed"}')  # escaped: valid JSON
    assert not accepts('{"body": "line one\nline two"}')
    assert not accepts('{"body": "a\ttab"}')
    assert accepts('{"body": "Grüße, ünïcode"}')
