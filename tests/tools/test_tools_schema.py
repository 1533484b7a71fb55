"""Tools from JSON schemas: kept whole, nested arguments coerced and validated, names kept."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from freyr_dspy.errors import ConfigError, ToolError
from freyr_dspy.schemas import Outcome
from freyr_dspy.tools import Tool, Toolbox, recorded_outcome

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "description": "who orders",
            "properties": {
                "name": {"type": "string"},
                "address": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "city name"},
                        "zip": {"type": "string"},
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
            "required": ["name", "address"],
        },
        "items": {
            "type": "array",
            "items": {"$ref": "#/$defs/Item"},
            "minItems": 1,
        },
        "express": {"type": "boolean", "default": False},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "required": ["customer", "items"],
    "$defs": {
        "Item": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "qty": {"type": "integer", "minimum": 1, "description": "how many"},
                "unit": {"type": "string", "enum": ["piece", "box"]},
            },
            "required": ["sku", "qty"],
        }
    },
}

GOOD_ORDER = {
    "customer": {"name": "Ada", "address": {"city": "Oslo"}},
    "items": [{"sku": "A1", "qty": 2}],
}


def order_tool(function: Any = None) -> Tool:
    return Tool.from_json_schema(
        "shop.create-order", "Create an order.", ORDER_SCHEMA, function=function
    )


def problems(tool: Tool, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as info:
        tool.validate_arguments(arguments)
    message = str(info.value)
    assert "\n" not in message  # one line the model can act on
    return message


# --------------------------------------------------------------------------- the schema


def test_the_full_schema_round_trips_and_is_not_shared() -> None:
    given = copy.deepcopy(ORDER_SCHEMA)
    tool = order_tool()
    assert tool.json_schema() == ORDER_SCHEMA
    assert tool.openai_schema()["function"] == {
        "name": "shop.create-order",
        "description": "Create an order.",
        "parameters": ORDER_SCHEMA,
    }
    tool.json_schema()["properties"].clear()  # a caller editing the copy changes nothing
    assert tool.json_schema() == ORDER_SCHEMA == given


def test_parameters_are_read_from_the_top_level_properties() -> None:
    table = {p.name: (p.type, p.required, p.default, p.enum) for p in order_tool().parameters}
    assert table == {
        "customer": ("object", True, None, ()),
        "items": ("array", True, None, ()),
        "express": ("boolean", False, False, ()),
        "note": ("string", False, None, ()),
    }


def test_full_catalog_shows_nested_shapes_with_refs_resolved() -> None:
    spec = Toolbox([order_tool()]).catalog("full")
    assert spec.splitlines() == [
        "- shop.create-order: Create an order.",
        "    - customer ({name: string, address: {city: string, zip?: string}}, required): "
        "who orders",
        "    - items (array of {sku: string, qty: integer, unit?: one of piece/box}, required)",
        "    - express (boolean, optional, default False)",
        "    - note (string | null, optional, default None)",
    ]


def test_a_tool_without_parameters_gets_an_empty_object_schema() -> None:
    tool = Tool.from_json_schema("ping", "Check.", None)
    assert tool.json_schema() == {"type": "object", "properties": {}, "required": []}
    assert tool.validate_arguments({}) == {}
    assert "unexpected argument 'x' (expected: none)" in problems(tool, {"x": 1})


@pytest.mark.parametrize(
    ("written", "standard"),
    [
        ("str", "string"),
        ("String", "string"),
        ("int", "integer"),
        ("float", "number"),
        ("bool", "boolean"),
        ("list", "array"),
        ("tuple", "array"),
        ("dict", "object"),
        (["int", "None"], ["integer", "null"]),
    ],
)
def test_habitual_type_names_are_read_as_json_types(written: Any, standard: Any) -> None:
    schema = {"type": "dict", "properties": {"x": {"type": written}}}
    tool = Tool.from_json_schema("t", "", schema)
    assert tool.json_schema()["type"] == "object"
    assert tool.json_schema()["properties"]["x"]["type"] == standard


def test_any_drops_the_type_and_nested_aliases_are_mapped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "value": {"type": "any"},
            "points": {"type": "list", "items": {"type": "tuple", "items": {"type": "float"}}},
        },
    }
    tool = Tool.from_json_schema("t", "", schema)
    properties = tool.json_schema()["properties"]
    assert properties["value"] == {}
    assert properties["points"] == {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    }
    assert tool.validate_arguments({"value": [1, "x"], "points": [["1.5", 2]]}) == {
        "value": [1, "x"],
        "points": [[1.5, 2]],
    }


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ([1, 2], "tool 'bad': parameters must be a JSON schema object, got list"),
        ({"type": "array"}, "tool 'bad': parameters must have type 'object', got 'array'"),
        (
            {"properties": {"a": {"type": "widget"}}},
            "tool 'bad': unknown type 'widget' at parameters.properties.a.type; expected one of "
            "string, integer, number, boolean, array, object, null",
        ),
        (
            {"properties": {"a": {"type": "string"}}, "required": ["b"]},
            "tool 'bad': required arguments 'b' are not in parameters.properties (a)",
        ),
        ({"properties": []}, "tool 'bad': parameters.properties must be an object"),
        ({"required": "a"}, "tool 'bad': parameters.required must be a list of names"),
        (
            {"properties": {"a": {"type": "string", "minLength": "two"}}},
            "tool 'bad': invalid JSON schema at properties.a.minLength: 'two' is not of type",
        ),
    ],
)
def test_bad_schemas_are_one_line_config_errors(parameters: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Tool.from_json_schema("bad", "", parameters)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "a tool name must be a non-empty string, got ''"),
        ({"name": None}, "a tool name must be a non-empty string, got None"),
        ({"function": "not callable"}, "tool 't': function must be callable"),
        ({"description": 3}, "tool 't': description must be a string"),
    ],
)
def test_bad_tool_parts_are_config_errors(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"name": "t", "description": "", "parameters": None, **kwargs}
    with pytest.raises(ConfigError, match=message):
        Tool.from_json_schema(**args)


# --------------------------------------------------------------------------- validation


def test_nested_values_are_coerced_the_way_small_models_write_them() -> None:
    arguments = {
        "Customer": {"name": 42, "address": '{"City": "Oslo", "zip": 150}'},
        "items": [{"sku": "A1", "qty": "2", "unit": "BOX"}, {"sku": "B2", "qty": 3.0}],
        "express": "true",
        "note": None,
    }
    assert order_tool().validate_arguments(arguments) == {
        "customer": {"name": "42", "address": {"city": "Oslo", "zip": "150"}},
        "items": [{"sku": "A1", "qty": 2, "unit": "box"}, {"sku": "B2", "qty": 3}],
        "express": True,
        "note": None,
    }


def test_null_for_an_optional_argument_means_left_out() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}
    tool = Tool.from_json_schema("t", "", {**schema, "required": ["s"]})
    assert tool.validate_arguments({"n": None, "s": "x"}) == {"s": "x"}
    assert "argument 's' expects string, got None" in problems(tool, {"s": None})


def test_every_nested_problem_is_named_by_its_path() -> None:
    message = problems(
        order_tool(),
        {
            "customer": {"name": "Ada", "address": {"zip": "1", "floor": 2}},
            "items": [{"sku": "A1", "qty": "many"}, {"qty": 0, "unit": "crate"}],
            "express": "maybe",
            "coupon": "X",
        },
    )
    assert message.startswith("shop.create-order: unexpected argument 'coupon' (expected: ")
    for clause in (
        "missing required argument 'customer.address.city': string (city name)",
        "unexpected argument 'customer.address.floor' (expected: city, zip)",
        "argument 'items[0].qty' expects integer (how many), got 'many'",
        "missing required argument 'items[1].sku': string",
        "argument 'items[1].qty' is invalid: 0 is less than the minimum of 1",
        "argument 'items[1].unit' expects one of 'piece', 'box', got 'crate'",
        "argument 'express' expects boolean, got 'maybe'",
    ):
        assert clause in message


def test_missing_required_nested_object_and_empty_array() -> None:
    message = problems(order_tool(), {"items": []})
    assert "missing required argument 'customer': {name: string, address: {" in message
    assert "argument 'items' is invalid: [] should be non-empty" in message


def test_long_values_are_shortened_in_messages() -> None:
    message = problems(order_tool(), {**GOOD_ORDER, "express": "x" * 500})
    assert "got 'xxxx" in message and "..." in message and len(message) < 200


def test_unknown_top_level_arguments_are_allowed_only_when_the_schema_says_so() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    open_tool = Tool.from_json_schema("t", "", {**schema, "additionalProperties": True})
    assert open_tool.validate_arguments({"a": "1", "b": "x"}) == {"a": 1, "b": "x"}
    any_extra = Tool.from_json_schema("t", "", {**schema, "additionalProperties": {}})
    assert any_extra.validate_arguments({"b": [1]}) == {"b": [1]}
    typed = Tool.from_json_schema("t", "", {**schema, "additionalProperties": {"type": "int"}})
    assert typed.validate_arguments({"b": "2"}) == {"b": 2}
    assert "argument 'c' expects integer, got 'x'" in problems(typed, {"c": "x"})
    closed = Tool.from_json_schema("t", "", schema)
    assert "unexpected argument 'b' (expected: a)" in problems(closed, {"a": 1, "b": "x"})


def test_recursive_schemas_validate_and_render() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["label"],
            }
        },
    }
    tool = Tool.from_json_schema("tree", "Store a tree.", schema)
    tree = {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]}
    assert tool.validate_arguments({"root": tree}) == {"root": tree}
    # two levels are coerced; deeper ones are not, but everything is still validated
    deep = {"label": 1, "children": [{"label": 2, "children": [{"label": 3}]}]}
    assert "argument 'root.children[0].children[0].label' expects string, got 3" in problems(
        tool, {"root": deep}
    )
    assert "root.label" not in problems(tool, {"root": deep})
    assert "missing required argument 'root.children[0].label'" in problems(
        tool, {"root": {"label": "a", "children": [{}]}}
    )
    shape = "{label: string, children?: array of {label: string, children?: array}}"
    assert f"root ({shape}, required)" in Toolbox([tool]).catalog("full")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
ORDER_PARTS = st.fixed_dictionaries(
    {},
    optional={
        "customer": st.fixed_dictionaries(
            {},
            optional={
                "name": JSON,
                "address": st.dictionaries(st.sampled_from(["city", "Zip", "x"]), JSON),
            },
        )
        | JSON,
        "items": st.lists(
            st.fixed_dictionaries({}, optional={"sku": JSON, "qty": JSON, "unit": JSON}), max_size=3
        )
        | JSON,
        "express": JSON,
        "note": JSON,
        "other": JSON,
    },
)


@settings(max_examples=150, deadline=None, database=None)
@given(ORDER_PARTS)
def test_any_written_arguments_are_accepted_valid_or_refused_in_one_line(arguments: Any) -> None:
    tool = order_tool()
    try:
        checked = tool.validate_arguments(arguments)
    except ToolError as exc:
        assert str(exc).startswith("shop.create-order: ") and "\n" not in str(exc)
        return
    assert Draft202012Validator(ORDER_SCHEMA).is_valid(checked)
    assert tool.validate_arguments(checked) == checked  # valid arguments are left alone


# --------------------------------------------------------------------------- execution


def test_the_function_gets_the_validated_nested_arguments() -> None:
    seen: list[dict[str, Any]] = []

    def create(**arguments: Any) -> dict[str, Any]:
        seen.append(arguments)
        return {"order": 7}

    box = Toolbox([order_tool(create)])
    written = {**GOOD_ORDER, "items": [{"sku": "A1", "qty": "2"}]}
    execution = box.execute("shop.create-order", written)
    assert execution.outcome == Outcome(ok=True, message='{"order": 7}', data={"order": 7})
    assert seen == [{**GOOD_ORDER, "items": [{"sku": "A1", "qty": 2}]}]
    assert execution.arguments == seen[0]
    failed = box.execute("shop.create-order", {"items": [{"sku": "A1", "qty": "x"}]})
    assert not failed.outcome.ok and len(seen) == 1  # never called with bad arguments


def test_a_function_taking_state_works_on_a_copy() -> None:
    def add(title: str, state: dict[str, list[str]]) -> str:
        state.setdefault("titles", []).append(title)
        return "added"

    schema = {"type": "object", "properties": {"title": {"type": "str"}}, "required": ["title"]}
    tool = Tool.from_json_schema("add", "Add.", schema, function=add)
    assert tool.takes_state
    before: dict[str, list[str]] = {}
    execution = Toolbox([tool]).execute("add", {"title": 5}, before)
    assert execution.state == {"titles": ["5"]} and before == {}


def test_spec_only_tools_record_the_call() -> None:
    box = Toolbox([order_tool()])
    execution = box.execute("shop.create-order", GOOD_ORDER, state={"x": 1})
    assert execution.outcome == recorded_outcome("shop.create-order")
    assert execution.outcome.ok and "recorded" in execution.outcome.message
    assert execution.arguments == GOOD_ORDER and execution.state == {"x": 1}


def test_dotted_and_dashed_names_are_kept_everywhere() -> None:
    tools = [
        Tool.from_json_schema(
            "math.hypot", "Hypotenuse.", {"properties": {"a": {"type": "number"}}}
        ),
        Tool.from_json_schema("get-weather", "Weather.", None, function=lambda: "sunny"),
        Tool.from_json_schema("get_weather", "Other weather.", None, function=lambda: "rainy"),
    ]
    box = Toolbox(tools)
    assert box.names == ["math.hypot", "get-weather", "get_weather"]
    assert box.catalog("names").splitlines() == ["- math.hypot", "- get-weather", "- get_weather"]
    assert "- math.hypot: Hypotenuse.\n    - a (number, optional, default None)" in box.catalog(
        "full"
    )
    assert box.get("math.hypot").name == "math.hypot"
    assert box.execute("get-weather", {}).outcome.message == "sunny"  # exact name first
    assert box.execute("get_weather", {}).outcome.message == "rainy"
    assert box.execute("math.hypot", {"a": "3"}).arguments == {"a": 3.0}
    assert box.subset(["math.hypot"]).names == ["math.hypot"]
    assert [t["function"]["name"] for t in (t.openai_schema() for t in box)] == box.names
    unknown = box.execute("math.hypo", {}).outcome
    assert not unknown.ok and "Did you mean 'math.hypot'" in unknown.message
