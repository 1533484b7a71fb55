"""What each role's output is typed by, per call, when its strategy runs it.

A structured fake (it claims to enforce JSON schemas) records the ``response_format`` of every
call: intents from the catalog, arguments from the called tool's schema, the NLT YES/NO lines,
library names, CallNavi API and parameter names. A fake that answers outside the schema (a
server ignoring it) is still read by the tolerant parsers.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import dspy
import pytest

import freyr_dspy
from freyr_dspy.benchmarks.callnavi._domain import CALLNAVI, CallNaviProgram
from freyr_dspy.benchmarks.callnavi._planning import MAX_CALLS
from freyr_dspy.domains._example import make_todo_toolbox
from freyr_dspy.program import FreyrProgram
from freyr_dspy.roles._tool_selection import parse_assessment, selection_contract
from freyr_dspy.schemas import Failure, RoleModel
from freyr_dspy.strategies._freyr import MAX_INTENTS
from freyr_dspy.testing import FakeCall, FunctionLM, register_fake, unregister_fake
from freyr_dspy.tools import Tool, Toolbox
from tests.artifacts.test_shipped_artifacts import toolbox_for
from tests.program.test_properties_program import build_world, run_once
from tests.strategies.test_gated_strategy import DOMAIN as GATED_DOMAIN
from tests.support.callnavi_fakes import FIXTURES, PETS
from tests.support.paths import COMPILED_DIR

TODO = make_todo_toolbox()
COMPILED = COMPILED_DIR


def arguments_of(call: FakeCall) -> dict[str, Any]:
    """The schema one call required of its single contracted output field's value."""
    fmt = call.config.response_format
    assert fmt and fmt["type"] == "json_schema", f"{call.role}: no schema sent ({fmt})"
    schema = fmt.get("json_schema", fmt)["schema"]
    assert schema["additionalProperties"] is False
    return dict(schema["properties"])


def fake(answers: dict[str, Any]) -> FunctionLM:
    """A structured fake answering ``answers[role]`` (a value or a callable of the call)."""

    def answer(call: FakeCall) -> Any:
        value = answers.get(call.role)
        return value(call) if callable(value) else value

    return FunctionLM(answer, structured_output=True)


def run(program: FreyrProgram, engine: FunctionLM, message: str, **kwargs: Any) -> Any:
    program.set_lm(dspy.LM("fake/typed", engine=engine, cache=False))
    return program(message=message, **kwargs).result


# --------------------------------------------------------------------------- freyr


def test_freyr_types_intents_by_the_catalog_and_arguments_by_the_tool() -> None:
    attempts = iter([{"arguments": {"title": "buy milk", "priority": "urgent"}}])

    def parameters(call: FakeCall) -> Any:
        return next(attempts, {"arguments": {"title": "buy milk", "priority": 5}})

    engine = fake(
        {
            "intent": {"intents": ["add_task"]},
            "parameters": parameters,
            "summary": {"reply": "Added."},
        }
    )
    program = FreyrProgram("todo")
    result = run(program, engine, "Add buy milk, urgent")
    assert [c.outcome.ok for c in result.calls] == [True] and result.calls[0].attempts == 2
    intent, first, retry, _summary = engine.calls
    assert arguments_of(intent)["intents"] == {
        "type": "array",
        "items": {"type": "string", "enum": [*TODO.names, "conversation"]},
        "maxItems": MAX_INTENTS,
    }
    add_task = TODO.get("add_task").json_schema()
    assert arguments_of(first)["arguments"] == add_task
    # After a failure the feedback offers the opt-out; the schema allows it too.
    give_up = arguments_of(retry)["arguments"]["anyOf"]
    assert give_up[0] == add_task and give_up[1]["required"] == ["give_up"]


def sent(call: FakeCall) -> bool:
    fmt = call.config.response_format
    return bool(fmt) and fmt.get("type") == "json_schema"


def test_freyr_reads_names_outside_the_catalog_as_before() -> None:
    # A server that ignores the schema: names outside the catalog reach the tolerant parser.
    engine = fake({"intent": {"intents": ["order_pizza"]}, "chat": {"reply": "Sorry?"}})
    result = run(FreyrProgram("todo"), engine, "Order a pizza")
    assert result.failure == Failure(
        kind="unknown_tool", detail="intent named no known tool: order_pizza"
    )
    engine = fake(
        {
            "intent": {"intents": ["Add-Task", "order_pizza"]},
            "parameters": {"arguments": {"title": "pizza"}},
            "summary": {"reply": "Added."},
        }
    )
    result = run(FreyrProgram("todo"), engine, "Add pizza")
    assert result.intents == ["add_task"] and result.calls[0].outcome.ok


def test_an_argument_schema_with_refs_is_sent_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
        "required": ["items"],
        "$defs": {
            "item": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku"],
            }
        },
    }
    tool = Tool.from_json_schema("create-order", "Order items.", schema)
    engine = fake(
        {
            "intent": {"intents": ["create-order"]},
            "parameters": {"arguments": {"items": [{"sku": "A1", "qty": 2}]}},
            "summary": {"reply": "Ordered."},
        }
    )
    result = run(FreyrProgram("todo", toolbox=Toolbox([tool])), engine, "order 2 of A1")
    assert result.calls[0].outcome.ok
    sent_schema = arguments_of(engine.calls[1])["arguments"]
    assert "$defs" not in sent_schema and "$ref" not in str(sent_schema)
    assert sent_schema["properties"]["items"]["items"]["properties"]["qty"] == {"type": "integer"}


def test_compiled_demos_are_still_sent_with_the_typed_output() -> None:
    program = freyr_dspy.load(COMPILED / "llmaker.json", root=COMPILED)
    demos = program.role("intent").predict.demos
    assert demos
    engine = fake({"intent": {"intents": ["conversation"]}, "chat": {"reply": "Hello."}})
    result = run(program, engine, "hello")
    assert result.reply == "Hello."
    intent = engine.calls[0]
    assert str(demos[0]["message"]) in intent.prompt
    enum = arguments_of(intent)["intents"]["items"]["enum"]
    assert enum == [*program.toolbox.names, "conversation"]


@pytest.mark.parametrize("name", sorted(p.name for p in COMPILED.glob("*.json")))
def test_every_shipped_artifact_loads_and_answers(name: str) -> None:
    """Each artifact in compiled/ rebuilds (benchmark data or not) and runs its roles."""
    path = COMPILED / name
    program = freyr_dspy.load(path, root=COMPILED, toolbox=toolbox_for(path))
    assert program.assignment and set(program.assignment) == set(program.role_names)
    all_no = "".join(f"{name} -- NO\n" for name in program.toolbox.names) + "Assessment finished."
    engine = fake(
        {
            "intent": {"intents": ["conversation"]},
            "tool_selection": {"thinking": "a greeting", "assessment": all_no},
            "chat": {"reply": "Hello."},
        }
    )
    result = run(program, engine, "hello")
    assert not result.calls and result.failure is None
    # NLT benchmark programs only select tools (respond=False): no chat call, no reply
    assert result.reply == ("Hello." if "chat" in engine.roles_called() else "")


# --------------------------------------------------------------------------- nlt and gated


def test_nlt_types_the_assessment_as_one_verdict_line_per_tool_in_order() -> None:
    lines = [f"{name} -- {'YES' if name == 'list_tasks' else 'NO'}" for name in TODO.names]
    assessment = "\n".join([*lines, "Assessment finished."])
    engine = fake(
        {
            "tool_selection": {"thinking": "a listing", "assessment": assessment},
            "parameters": {"arguments": {"status": "open"}},
            "summary": {"reply": "Nothing open."},
        }
    )
    result = run(FreyrProgram("todo", strategy="nlt"), engine, "what is open?")
    assert [c.tool for c in result.calls] == ["list_tasks"]
    properties = arguments_of(engine.calls[0])
    assert properties["thinking"] == {"type": "string"}
    pattern = properties["assessment"]["pattern"]
    assert re.fullmatch(pattern[1:-1], assessment)
    assert not re.fullmatch(pattern[1:-1], assessment.replace("list_tasks -- YES\n", ""))


def test_nlt_pattern_names_are_literal_and_the_parser_reads_the_lines() -> None:
    names = ["math.hypot", "get-weather", "Website information"]
    pattern = selection_contract(names)["assessment"]["pattern"]
    text = "math.hypot -- NO\nget-weather -- YES\nWebsite information -- NO\nAssessment finished."
    assert re.fullmatch(pattern[1:-1], text)
    assert not re.fullmatch(pattern[1:-1], text.replace("math.hypot", "mathXhypot"))
    assert parse_assessment(text, names).selected == ("get-weather",)
    assert selection_contract(['say "hi"']) == {} and selection_contract([]) == {}


def test_gated_types_the_gate_by_the_library_names() -> None:
    engine = fake(
        {
            "library": {"selected": ["weather"]},
            "intent": {"intents": ["weather"]},
            "parameters": {"arguments": {"city": "Oslo"}},
            "summary": {"reply": "sunny"},
        }
    )
    run(FreyrProgram(GATED_DOMAIN, strategy="gated"), engine, "weather in Oslo?")
    library, intent = engine.calls[:2]
    assert arguments_of(library)["selected"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["weather", "music", "banking", "none"]},
        "maxItems": 4,
    }
    # The inner selector sees, and may name, only the gated tools.
    assert arguments_of(intent)["intents"]["items"]["enum"] == ["weather", "conversation"]


# --------------------------------------------------------------------------- callnavi


@pytest.fixture
def callnavi() -> Iterator[Any]:
    def install(answers: dict[str, Any], strategy: str) -> tuple[CallNaviProgram, FunctionLM]:
        engine = fake(answers)
        register_fake("typed-callnavi", engine)
        program = CallNaviProgram(CALLNAVI, strategy=strategy, max_retries=0, data_dir=FIXTURES)
        spec = RoleModel(model="fake/typed-callnavi")
        program.apply_assignment({role: spec for role in program.role_names})
        return program, engine

    yield install
    unregister_fake("typed-callnavi")


PET_APIS = [
    "getOwnerID",
    "getPetList",
    "bookGrooming",
    "getGroomingStatus",
    "registerPet",
    "getOpeningHours",
]


def test_two_step_types_the_router_by_the_api_names(callnavi: Any) -> None:
    program, engine = callnavi({"router": {"apis": ["getOpeningHours"]}}, strategy="two_step")
    program(message="When is the salon open?", state=PETS)
    assert arguments_of(engine.calls[0])["apis"] == {
        "type": "array",
        "items": {"type": "string", "enum": PET_APIS},
        "maxItems": MAX_CALLS,
    }


def test_backward_types_each_name_it_asks_for(callnavi: Any) -> None:
    answers = {
        "final_call": {"final_api": "registerPet"},
        "call_parameters": {"arguments": {"ownerID": "Ana", "petDetails": {"name": "Miso"}}},
        "missing_inputs": lambda call: {
            "missing": ["ownerID"] if "registerPet" in call.inputs["call"] else []
        },
        "supporting_call": {"supporting_api": "getOwnerID"},
    }
    program, engine = callnavi(answers, strategy="backward")
    program(message="I am Ana Silva, register my cat Miso.", state=PETS)
    by_role: dict[str, Any] = {}  # the first call of each role
    for call in engine.calls:
        if call.role != "call_parameters":
            by_role.setdefault(call.role, arguments_of(call))
    assert by_role["final_call"]["final_api"] == {"type": "string", "enum": PET_APIS}
    assert by_role["missing_inputs"]["missing"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["ownerID", "petDetails"]},
        "maxItems": 2,
    }
    supporting = by_role["supporting_call"]["supporting_api"]["enum"]
    assert supporting[-1] == "none" and "getOwnerID" in supporting
    assert "registerPet" not in supporting  # a call cannot provide its own input
    # call_parameters keeps its declared type: "$$$" may stand for a value of any type.
    assert not sent(next(c for c in engine.calls if c.role == "call_parameters"))


# --------------------------------------------------------------------------- junk


@pytest.mark.parametrize("strategy", ["freyr", "nlt", "gated", "two_step", "backward"])
def test_junk_from_a_server_that_ignores_the_schema_is_a_handled_outcome(strategy: str) -> None:
    case = build_world(strategy, "json")
    engine = FunctionLM(case.junk, structured_output=True)
    case.program.set_lm(dspy.LM("fake/typed-junk", engine=engine, cache=False))
    rng = random.Random(f"typed-{strategy}")
    problems = [problem for _ in range(60) if (problem := run_once(case, rng)) is not None]
    assert not problems, problems[:3]
    assert any(sent(call) for call in engine.calls)
