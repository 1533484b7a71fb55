"""``scripts/data/tool_suite.json``: our own tool-calling suite is well-formed and answerable.

The suite scores a model's calls against ``expected``, so a broken toolbox or an expected call
that could never validate (or whose values the request never states) would blame the model
for our mistake. Fast: no model is loaded.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from freyr_dspy.tools import Toolbox
from tests.support.paths import SCRIPTS_DIR

SUITE_PATH = SCRIPTS_DIR / "data" / "tool_suite.json"
SUITE = json.loads(SUITE_PATH.read_text(encoding="utf-8"))
TOOLBOXES: dict[str, list[dict[str, Any]]] = SUITE["toolboxes"]
REQUESTS: list[dict[str, Any]] = SUITE["requests"]
REQUEST_IDS = [r["id"] for r in REQUESTS]

MIN_REQUESTS = 70
MIN_PER_KIND = {"one-tool": 44, "two-tool": 13, "no-tool": 13}
EXAMPLE = re.compile(r"e\.g\. '([^']+)'")


def _body(spec: dict[str, Any]) -> dict[str, Any]:
    """The name/description/parameters part of either accepted OpenAI shape."""
    return spec.get("function", spec)


def _kind(request: dict[str, Any]) -> str:
    return {0: "no-tool", 1: "one-tool", 2: "two-tool"}.get(len(request["expected"]), "other")


def _leaves(value: Any, schema: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Every scalar inside an argument value, with the schema that describes it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, schema["properties"][key])
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, schema["items"])
    else:
        yield value, schema


def _schemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A schema and all schemas nested in it (properties and items)."""
    yield schema
    for sub in schema.get("properties", {}).values():
        yield from _schemas(sub)
    if isinstance(schema.get("items"), dict):
        yield from _schemas(schema["items"])


def _spoken(number: int | float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(number)


def test_suite_says_what_it_is_and_that_it_is_our_own() -> None:
    """The about line keeps the suite's origin clear to anyone reusing it."""
    about = SUITE["about"].lower()
    assert "freyr-dspy" in about
    assert "not from any benchmark" in about


@pytest.mark.parametrize("box", sorted(TOOLBOXES))
def test_toolbox_loads_from_openai_dicts_and_keeps_exact_names(box: str) -> None:
    """The benchmark builds each toolbox with from_openai; dotted and dashed names must survive."""
    specs = TOOLBOXES[box]
    toolbox = Toolbox.from_openai(specs)
    assert toolbox.names == [_body(spec)["name"] for spec in specs]
    assert 5 <= len(toolbox) <= 7


def test_toolboxes_cover_both_openai_shapes_and_name_styles() -> None:
    """Users bring wrapped and bare dicts, and names with dots and dashes; the suite has all."""
    specs = [spec for specs in TOOLBOXES.values() for spec in specs]
    assert len(TOOLBOXES) == 5
    assert any("function" in spec for spec in specs)
    assert any("function" not in spec for spec in specs)
    names = [_body(spec)["name"] for spec in specs]
    assert any("." in name for name in names)
    assert any("-" in name for name in names)


def test_parameter_schemas_use_every_json_type_enums_and_defaults() -> None:
    """Calls are scored on every kind of argument, so the schemas must offer every kind."""
    arguments = [
        sub
        for specs in TOOLBOXES.values()
        for spec in specs
        for prop in _body(spec)["parameters"]["properties"].values()
        for sub in _schemas(prop)
    ]
    types = {s.get("type") for s in arguments}
    assert {"string", "integer", "number", "boolean", "array", "object"} <= types
    assert all("items" in s for s in arguments if s.get("type") == "array")
    assert any(s.get("type") == "object" and s.get("required") for s in arguments)
    assert any("enum" in s for s in arguments)
    assert any("default" in s for s in arguments)


def test_descriptions_give_quoted_examples() -> None:
    """Quoted examples let the benchmark catch a model that copies them instead of the user."""
    examples = EXAMPLE.findall(json.dumps(TOOLBOXES))
    assert len(examples) >= 5


def test_request_ids_are_unique_and_name_their_toolbox() -> None:
    """Results are keyed by id; an id reads as '<toolbox>-<n>'."""
    assert len(set(REQUEST_IDS)) == len(REQUEST_IDS)
    for request in REQUESTS:
        assert request["toolbox"] in TOOLBOXES
        assert re.fullmatch(rf"{re.escape(request['toolbox'])}-\d+", request["id"])
        assert request["message"].strip()


def test_request_kinds_meet_their_minimum_counts() -> None:
    """Enough one-tool, two-tool and no-tool requests to tell models apart on each kind."""
    kinds = Counter(_kind(r) for r in REQUESTS)
    assert len(REQUESTS) >= MIN_REQUESTS
    assert kinds["other"] == 0
    for kind, minimum in MIN_PER_KIND.items():
        assert kinds[kind] >= minimum, kind


@pytest.mark.parametrize("box", sorted(TOOLBOXES))
def test_each_toolbox_has_a_no_tool_and_a_two_tool_request(box: str) -> None:
    """Every toolbox tests both knowing when not to call and chaining two calls."""
    kinds = {_kind(r) for r in REQUESTS if r["toolbox"] == box}
    assert {"no-tool", "two-tool", "one-tool"} <= kinds


@pytest.mark.parametrize("request_", REQUESTS, ids=REQUEST_IDS)
def test_expected_calls_pass_their_tools_validation_unchanged(request_: dict[str, Any]) -> None:
    """An expected call must be one the toolbox accepts as written, with nothing coerced."""
    toolbox = Toolbox.from_openai(TOOLBOXES[request_["toolbox"]])
    for call in request_["expected"]:
        assert call["name"] in toolbox.names, call["name"]
        tool = toolbox.get(call["name"])
        assert tool.validate_arguments(call["arguments"]) == call["arguments"]


@pytest.mark.parametrize("request_", REQUESTS, ids=REQUEST_IDS)
def test_expected_values_are_stated_in_the_message_or_state(request_: dict[str, Any]) -> None:
    """A model can only be blamed for a value the user actually wrote (enums and flags aside)."""
    text = (request_["message"] + " " + request_.get("state", "")).lower()
    toolbox = Toolbox.from_openai(TOOLBOXES[request_["toolbox"]])
    for call in request_["expected"]:
        schema = toolbox.get(call["name"]).json_schema()
        for value, sub in _leaves(call["arguments"], schema):
            if "enum" in sub or isinstance(value, bool):
                continue
            spoken = _spoken(value) if isinstance(value, int | float) else value.strip().lower()
            assert spoken in text, (call["name"], value)


def test_expected_values_never_copy_a_description_example() -> None:
    """If a request used an example value, copying the example would score as correct."""
    examples = {example.strip().lower() for example in EXAMPLE.findall(json.dumps(TOOLBOXES))}
    for request in REQUESTS:
        toolbox = Toolbox.from_openai(TOOLBOXES[request["toolbox"]])
        for call in request["expected"]:
            schema = toolbox.get(call["name"]).json_schema()
            for value, _ in _leaves(call["arguments"], schema):
                assert str(value).strip().lower() not in examples, (request["id"], value)
