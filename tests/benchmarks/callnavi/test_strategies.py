from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from freyr_dspy.benchmarks.callnavi._backward import rank_candidates
from freyr_dspy.benchmarks.callnavi._domain import CallNaviState, domain_toolbox
from freyr_dspy.benchmarks.callnavi._planning import MAX_CALLS
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Failure, RoleModel
from freyr_dspy.testing import FakeCall, FunctionLM
from tests.support.callnavi_fakes import FIXTURES, PETS, Responder, make_program

Install = Callable[[Responder], FunctionLM]


def plan_of(prediction: Any) -> dict[str, Any]:
    state = prediction.result.state
    assert isinstance(state, CallNaviState)
    assert state.plan is not None
    return state.plan


def test_single_writes_the_whole_call_list_in_one_call(fake_lm: Install) -> None:
    engine = fake_lm(
        lambda call: (
            {
                "API": ["getpetlist"],
                "parameters": [{"ownerID": "OW-1"}],
            }
            if call.role == "single"
            else None
        )
    )
    prediction = make_program("single")(message="List the pets of owner OW-1.", state=PETS)
    assert plan_of(prediction) == {"API": ["getPetList"], "parameters": [{"ownerID": "OW-1"}]}
    assert json.loads(prediction.result.reply)["API"] == ["getpetlist"]  # the raw text
    [call] = prediction.result.calls
    assert (call.tool, call.arguments, call.outcome.ok) == ("getPetList", {"ownerID": "OW-1"}, True)
    [seen] = engine.calls
    assert "registerPet(ownerID: string, petDetails:" in seen.inputs["catalog"]  # full specs
    assert prediction.result.usage["single"].lm_calls == 1


def test_single_keeps_the_shape_the_model_wrote(fake_lm: Install) -> None:
    fake_lm(lambda call: {"API": ["getOpeningHours", "nosuchApi"], "parameters": []})
    prediction = make_program("single")(message="When is the salon open?", state=PETS)
    assert plan_of(prediction) == {"API": ["getOpeningHours", "nosuchApi"], "parameters": []}
    outcomes = [(c.tool, c.outcome.ok) for c in prediction.result.calls]
    assert outcomes == [("getOpeningHours", True), ("nosuchApi", False)]


def test_single_reads_a_broken_answer_tolerantly(fake_lm: Install) -> None:
    fake_lm(lambda call: "Sure! {'api': ['getGroomingStatus'], 'parameters': [{'bookingID': 'B1'}]")
    prediction = make_program("single")(message="Check grooming booking B1.", state=PETS)
    assert plan_of(prediction) == {
        "API": ["getGroomingStatus"],
        "parameters": [{"bookingID": "B1"}],
    }


def test_single_catalog_level_is_an_option(fake_lm: Install) -> None:
    engine = fake_lm(lambda call: {"API": [], "parameters": []})
    prediction = make_program("single", catalog="names")(message="Hi", state=PETS)
    assert engine.calls[0].inputs["catalog"].splitlines()[0] == "- getOwnerID"
    assert prediction.result.failure == Failure(
        kind="unknown_tool", detail="the answer named no known API"
    )


def test_two_step_routes_then_fills_each_call_from_the_routed_specs_only(
    fake_lm: Install,
) -> None:
    def answer(call: FakeCall) -> Any:
        if call.role == "router":
            return {"apis": ["bookGrooming", "get grooming status", "madeUpApi"]}
        if call.role == "call_parameters" and "call 1:" in call.inputs["call"]:
            return {"arguments": {"petID": "PT-9", "date": "2025-01-02", "service": "full"}}
        if call.role == "call_parameters":
            return {"arguments": {"bookingID": "$$$"}}
        return None

    engine = fake_lm(answer)
    message = "Book a full grooming for pet PT-9 on 2025-01-02 and check the booking."
    prediction = make_program("two_step")(message=message, state=PETS)
    assert plan_of(prediction) == {
        "API": ["bookGrooming", "getGroomingStatus"],
        "parameters": [
            {"petID": "PT-9", "date": "2025-01-02", "service": "full"},
            {"bookingID": "$$$"},
        ],
    }
    router, first, second = engine.calls
    assert router.inputs["catalog"].startswith("- getOwnerID: Find the owner ID")  # brief
    plan_text = first.inputs["plan"]
    assert "1. bookGrooming(" in plan_text and "2. getGroomingStatus(" in plan_text
    assert "registerPet" not in plan_text and "getPetList" not in plan_text
    assert second.inputs["call"].startswith("call 2: getGroomingStatus(bookingID: string)")
    assert prediction.result.intents == ["bookGrooming", "getGroomingStatus"]


def test_two_step_skips_the_parameter_role_for_zero_argument_apis(fake_lm: Install) -> None:
    engine = fake_lm(lambda call: {"apis": ["getOpeningHours"]} if call.role == "router" else None)
    prediction = make_program("two_step")(message="When is the salon open?", state=PETS)
    assert plan_of(prediction) == {"API": ["getOpeningHours"], "parameters": [{}]}
    assert engine.roles_called() == ["router"]


def test_two_step_reports_a_router_that_names_nothing_known(fake_lm: Install) -> None:
    fake_lm(lambda call: {"apis": ["bakeCake"]})
    prediction = make_program("two_step")(message="Bake me a cake", state=PETS)
    assert plan_of(prediction) == {"API": [], "parameters": []}
    assert prediction.result.failure == Failure(
        kind="unknown_tool", detail="router named no known API: bakeCake"
    )


def test_backward_plans_a_supporting_call_with_a_placeholder(fake_lm: Install) -> None:
    def answer(call: FakeCall) -> Any:
        if call.role == "final_call":
            return {"final_api": "registerPet"}
        if call.role == "call_parameters" and "registerPet(" in call.inputs["call"]:
            return {"arguments": {"ownerID": "Ana", "petDetails": {"name": "Miso"}}}
        if call.role == "call_parameters":
            return {"arguments": {"ownerName": "Ana Silva"}}
        if call.role == "missing_inputs":
            return {"missing": ["OwnerId"] if "registerPet" in call.inputs["call"] else []}
        if call.role == "supporting_call":
            return {"supporting_api": "getOwnerID"}
        return None

    engine = fake_lm(answer)
    prediction = make_program("backward")(
        message="I am Ana Silva, register my cat Miso.", state=PETS
    )
    assert plan_of(prediction) == {
        "API": ["getOwnerID", "registerPet"],
        "parameters": [
            {"ownerName": "Ana Silva"},
            {"ownerID": "$$$", "petDetails": {"name": "Miso"}},
        ],
    }
    assert engine.roles_called() == [
        "final_call",
        "call_parameters",
        "missing_inputs",
        "supporting_call",
        "call_parameters",
        "missing_inputs",
    ]
    support = engine.calls[3]
    assert support.inputs["needed"] == "the value of 'ownerID' for the call registerPet"
    assert support.inputs["candidates"].startswith("- getOwnerID(")  # best return match first
    assert "- none: no API returns it" in support.inputs["candidates"]
    # the later parameter call sees both planned calls, in execution order
    assert engine.calls[4].inputs["plan"].startswith("1. getOwnerID(")


def test_backward_stops_when_no_api_provides_the_missing_value(fake_lm: Install) -> None:
    def answer(call: FakeCall) -> Any:
        return {
            "final_call": {"final_api": "getGroomingStatus"},
            "call_parameters": {"arguments": {"bookingID": "B-7"}},
            "missing_inputs": {"missing": ["bookingID", "notAParameter"]},
            "supporting_call": {"supporting_api": "none"},
        }.get(call.role)

    fake_lm(answer)
    prediction = make_program("backward")(message="How is my booking?", state=PETS)
    assert plan_of(prediction) == {
        "API": ["getGroomingStatus"],
        "parameters": [{"bookingID": "B-7"}],
    }


def test_backward_plan_length_is_capped(fake_lm: Install) -> None:
    def answer(call: FakeCall) -> Any:
        return {
            "final_call": {"final_api": "getPetList"},
            "call_parameters": {"arguments": {"ownerID": "x"}},
            "missing_inputs": {
                "missing": [
                    "ownerID",
                    "ownerName",
                    "petID",
                    "bookingID",
                    "date",
                    "service",
                    "petDetails",
                ]
            },
            # always the best-ranked candidate: a new supporting call every time
            "supporting_call": {
                "supporting_api": call.inputs.get("candidates", "- x(")[2:].split("(")[0]
            },
        }.get(call.role)

    engine = fake_lm(answer)
    prediction = make_program("backward")(message="loop forever", state=PETS)
    assert 2 < len(plan_of(prediction)["API"]) <= MAX_CALLS
    assert len(engine.calls) <= 1 + MAX_CALLS * (2 + 2)  # parameters, missing, 2 supports


def test_candidates_are_ranked_by_return_values() -> None:
    box = domain_toolbox(FIXTURES, "pets")
    assert rank_candidates(box, "bookingID", limit=2)[0].name == "bookGrooming"
    assert rank_candidates(box, "ownerID", exclude="getOwnerID", limit=3)[0].name != "getOwnerID"


def test_a_model_failure_is_reported_not_raised(fake_lm: Install) -> None:
    def overflow(call: FakeCall) -> Any:
        raise ValueError("Requested tokens (5326) exceed context window of 4096")

    fake_lm(overflow)
    prediction = make_program("single")(message="List the pets of owner OW-1.", state=PETS)
    failure = prediction.result.failure
    assert failure is not None and failure.kind == "context"
    assert "exceed context window" in failure.detail
    assert prediction.result.calls == []


@pytest.mark.parametrize("strategy", ["single", "two_step", "backward"])
def test_strategies_also_run_on_a_plain_program_with_the_state_naming_the_domain(
    fake_lm: Install,
    strategy: str,
) -> None:
    fake_lm(
        lambda call: {
            "single": {"API": ["getOpeningHours"], "parameters": [{}]},
            "router": {"apis": ["getOpeningHours"]},
            "final_call": {"final_api": "getOpeningHours"},
        }.get(call.role)
    )
    program = FreyrProgram("callnavi", strategy=strategy)
    program.apply_assignment({r: RoleModel(model="fake/callnavi") for r in program.role_names})
    prediction = program(message="When are you open?", state=PETS)
    assert [c.tool for c in prediction.result.calls] == ["getOpeningHours"]


def test_gated_runs_on_callnavi_through_the_program_toolbox(fake_lm: Install) -> None:
    pytest.importorskip("freyr_dspy.strategies._gated")

    def answer(call: FakeCall) -> Any:
        if call.role == "library":
            return {"selected": ["grooming"]}
        if call.role == "intent":
            return {"intents": ["getGroomingStatus"]}
        if call.role == "parameters":
            return {"arguments": {"bookingID": "B1"}}
        if call.role == "summary":
            return {"reply": "Booking B1 checked."}
        return None

    engine = fake_lm(answer)
    prediction = make_program("gated")(message="Check grooming booking B1.", state=PETS)
    assert [(c.tool, c.arguments) for c in prediction.result.calls] == [
        ("getGroomingStatus", {"bookingID": "B1"})
    ]
    libraries = engine.calls[0].inputs["libraries"]
    assert "grooming" in libraries
    assert "registerPet" not in engine.calls[1].inputs["tools"]  # the gate hid other libraries
