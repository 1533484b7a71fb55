"""Blame rules on errors as other validators and servers word them, not only as LLMaker does.

Each error is produced by the real library (pydantic, jsonschema, our toolbox's validation);
the MCP one is worded as FastMCP reports a tool's exception.
"""

from __future__ import annotations

import jsonschema
import pydantic
import pytest

from freyr_dspy.strategies.retry._blame import blamed_arguments, listed_choices
from freyr_dspy.tools import Toolbox

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}


class Forecast(pydantic.BaseModel):
    city: str
    days: int = pydantic.Field(le=7)


def pydantic_error() -> str:
    with pytest.raises(pydantic.ValidationError) as raised:
        Forecast(city="Lima", days=10)
    return str(raised.value)


def jsonschema_error() -> str:
    with pytest.raises(jsonschema.ValidationError) as raised:
        jsonschema.validate({"city": "Lima", "unit": "kelvin"}, SCHEMA)
    return raised.value.message


def toolbox_error() -> str:
    tool = {
        "type": "function",
        "function": {"name": "weather", "description": "w", "parameters": SCHEMA},
    }
    outcome = (
        Toolbox.from_openai([tool])
        .execute("weather", {"city": "Lima", "unit": "kelvin"}, None)
        .outcome
    )
    assert not outcome.ok
    return outcome.message


def test_a_pydantic_error_blames_the_field_it_names() -> None:
    assert blamed_arguments({"city": "Lima", "days": 10}, pydantic_error()) == {"days": 10}


@pytest.mark.parametrize("error", [jsonschema_error, toolbox_error])
def test_an_enum_error_blames_the_value_it_quotes_and_not_the_others(error) -> None:
    assert blamed_arguments({"city": "Lima", "unit": "kelvin"}, error()) == {"unit": "kelvin"}


def test_a_server_error_that_lists_the_known_values_offers_them() -> None:
    error = "Error executing tool get_forecast: Unknown city 'Atlantis'. Known cities: Oslo, Paris"
    assert blamed_arguments({"city": "Atlantis", "days": 3}, error) == {"city": "Atlantis"}
    assert listed_choices(error, "city", "Atlantis") == ["Oslo", "Paris"]


def test_an_error_that_names_nothing_written_blames_nothing() -> None:
    assert blamed_arguments({"city": "Lima"}, "upstream service unavailable (HTTP 503)") == {}
