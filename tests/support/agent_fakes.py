"""A weather agent's model for the agent-framework tests: every role, one fake.

The frameworks run their own loops against ``freyr serve``: the weather tool first, then
(when they ask for structured output by a tool) their output tool, filled from the result;
a reply in words, or the ``City`` JSON under a ``response_format``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from freyr_dspy.testing import Answer, FakeCall

#: What the weather tool returns, and what the agents must end up with.
WEATHER_RESULT = "Paris: 14 C"
REPLY = "It is 14 C in Paris. Paris is at 14 C today."
GREETING = "Hello! Ask me about the weather."
QUESTION = "What is the weather in Paris?"

_CATALOG_NAME = re.compile(r"^- ([\w-]+):", re.M)


class City(BaseModel):
    """The structured answer the agents ask for."""

    city: str
    celsius: int


PARIS = City(city="Paris", celsius=14)


def weather_agent(call: FakeCall) -> Answer | None:
    """Plan the weather call, then the output tool after its result; reply from the result."""
    if call.role == "intent":
        return {"intents": _plan(call)}
    if call.role == "parameters":
        if call.inputs.get("tool", "").startswith("- get_weather"):
            return {"arguments": {"city": "Paris"}}
        return {"arguments": PARIS.model_dump()}  # an output tool: the structured answer
    if call.role in ("summary", "chat"):
        structured = "celsius" in str(call.config.response_format or "")
        if structured:
            return {"reply": PARIS.model_dump()}
        return {"reply": REPLY if call.role == "summary" else GREETING}
    return None


def _plan(call: FakeCall) -> list[str]:
    names = [n for n in _CATALOG_NAME.findall(call.inputs.get("tools", "")) if n != "conversation"]
    if f"get_weather: {WEATHER_RESULT}" in call.inputs.get("conversation", ""):
        outputs = [name for name in names if name != "get_weather"]
        return outputs[:1] or ["conversation"]
    return ["get_weather"] if "weather" in call.inputs.get("message", "") else ["conversation"]
