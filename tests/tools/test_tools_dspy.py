"""``Tool.from_dspy`` and ``Tool.from_function``/``from_model`` side by side."""

from __future__ import annotations

from typing import Any

import dspy
import pytest
from pydantic import BaseModel, Field

from freyr_dspy.errors import ConfigError
from freyr_dspy.tools import Tool, Toolbox


class Stop(BaseModel):
    city: str
    nights: int = Field(ge=1)


def plan_trip(traveller: str, stops: list[Stop], budget: float | None = None) -> str:
    """Plan a trip through several stops."""
    route = " -> ".join(f"{s.city} ({s.nights})" for s in stops)  # real Stop objects
    return f"{traveller}: {route}" + (f" under {budget:g}" if budget is not None else "")


def test_name_description_schema_and_function_are_kept() -> None:
    native = dspy.Tool(plan_trip, name="travel.plan-trip")
    tool = Tool.from_dspy(native, library="travel")
    assert (tool.name, tool.description, tool.library) == (
        "travel.plan-trip",
        "Plan a trip through several stops.",
        "travel",
    )
    schema = tool.json_schema()
    assert schema["properties"] == native.args
    assert schema["required"] == ["traveller", "stops"]
    assert tool.openai_schema() == native.format_as_litellm_function_call()
    box = Toolbox([tool])
    assert "stops (array of {city: string, nights: integer}, required)" in box.catalog("full")
    outcome = box.execute(
        "travel.plan-trip",
        {"traveller": "Ada", "stops": [{"city": "Oslo", "nights": "2"}], "budget": "900"},
    ).outcome
    assert outcome.message == "Ada: Oslo (2) under 900"


def test_bad_arguments_are_caught_before_the_function_runs() -> None:
    calls: list[Any] = []

    def record(stops: list[Stop]) -> str:
        calls.append(stops)
        return "ok"

    box = Toolbox([Tool.from_dspy(dspy.Tool(record))])
    outcome = box.execute("record", {"stops": [{"city": "Oslo", "nights": 0}, {"nights": 1}]})
    assert not outcome.outcome.ok and calls == []
    assert "argument 'stops[0].nights' is invalid: 0 is less than the minimum of 1" in (
        outcome.outcome.message
    )
    assert "missing required argument 'stops[1].city': string" in outcome.outcome.message


def test_async_dspy_tools_are_awaited() -> None:
    async def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    box = Toolbox([Tool.from_dspy(dspy.Tool(double))])
    assert box.execute("double", {"n": "21"}).outcome.message == "42"


def test_only_dspy_tools_are_accepted() -> None:
    with pytest.raises(ConfigError, match=r"Tool\.from_dspy expects a dspy\.Tool, got function"):
        Tool.from_dspy(plan_trip)  # type: ignore[arg-type]


def test_python_functions_and_models_keep_their_pydantic_validation() -> None:
    """The JSON-schema path is only for tools built from schemas."""

    class Booking(BaseModel):
        """Book seats."""

        seats: int = Field(description="how many")

    by_function = Tool.from_function(plan_trip)
    by_model = Tool.from_model(Booking, lambda seats: f"{seats} seats")
    assert by_function.schema is None and by_model.schema is None
    assert by_model.json_schema() == {
        "type": "object",
        "properties": {"seats": {"type": "integer", "description": "how many"}},
        "required": ["seats"],
    }
    box = Toolbox([by_function, by_model])
    assert box.execute("booking", {"seats": "3"}).outcome.message == "3 seats"
    trip = box.execute("plan_trip", {"traveller": "Ada", "stops": [{"city": "Rome", "nights": 1}]})
    assert trip.outcome.message == "Ada: Rome (1)"
