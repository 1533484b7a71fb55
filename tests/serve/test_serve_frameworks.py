"""Agent frameworks run their ordinary loops against a real ``freyr serve`` (a fake model).

pydantic-ai, LangChain (with LangGraph, which runs its agents) and the OpenAI Agents SDK each
call the weather tool, get the answer in words, get the ``City`` answer both ways they ask for
structured output (a tool the model must call, and ``response_format``), and stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from freyr_dspy.serve import ServedProgram
from tests.support.agent_fakes import (
    PARIS,
    QUESTION,
    REPLY,
    WEATHER_RESULT,
    City,
    weather_agent,
)
from tests.support.serve_helpers import make_program, serving

pytestmark = pytest.mark.server

MODEL = "weather"
#: The Agents SDK's event for a piece of the reply's text.
TEXT_DELTA = "response.output_text.delta"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    program, _ = make_program(weather_agent, structured_output=True)
    with serving(ServedProgram(MODEL, program)) as base:
        yield base


class Calls:
    """The weather tool, counting its calls: the framework ran it, not the server."""

    def __init__(self) -> None:
        self.cities: list[str] = []

    def get_weather(self, city: str) -> str:
        """Current weather in a city."""
        self.cities.append(city)
        return WEATHER_RESULT


# --------------------------------------------------------------------------- pydantic-ai


def pydantic_agent(base_url: str, calls: Calls, output_type: Any = str) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=base_url, api_key="-")
    model = OpenAIChatModel(MODEL, provider=provider)
    agent = Agent(model, output_type=output_type)
    agent.tool_plain(calls.get_weather)
    return agent


def test_pydantic_ai_runs_its_tool_loop(base_url: str) -> None:
    calls = Calls()
    result = pydantic_agent(base_url, calls).run_sync(QUESTION)
    assert result.output == REPLY and calls.cities == ["Paris"]


@pytest.mark.parametrize("mode", ["ToolOutput", "NativeOutput"])
def test_pydantic_ai_gets_structured_output_either_way(base_url: str, mode: str) -> None:
    import pydantic_ai

    calls = Calls()
    output = getattr(pydantic_ai, mode)(City)
    result = pydantic_agent(base_url, calls, output).run_sync(QUESTION)
    assert result.output == PARIS and calls.cities == ["Paris"]


def test_pydantic_ai_streams_the_reply(base_url: str) -> None:
    async def streamed() -> list[str]:
        agent = pydantic_agent(base_url, Calls())
        async with agent.run_stream(QUESTION) as run:
            return [piece async for piece in run.stream_text(delta=True, debounce_by=None)]

    pieces = asyncio.run(streamed())
    assert "".join(pieces) == REPLY and len(pieces) > 1


# --------------------------------------------------------------------------- LangChain, LangGraph


def chat_model(base_url: str) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=base_url, api_key="-", model=MODEL, max_retries=0)


def langchain_tool(calls: Calls) -> Any:
    from langchain_core.tools import tool

    return tool(calls.get_weather)


def test_a_langchain_agent_runs_its_tool_loop_on_langgraph(base_url: str) -> None:
    from langchain.agents import create_agent

    calls = Calls()
    agent = create_agent(chat_model(base_url), [langchain_tool(calls)])
    state = agent.invoke({"messages": [("user", QUESTION)]})
    kinds = [message.type for message in state["messages"]]
    assert kinds == ["human", "ai", "tool", "ai"] and state["messages"][-1].content == REPLY
    assert calls.cities == ["Paris"]


@pytest.mark.parametrize("strategy", ["ToolStrategy", "ProviderStrategy"])
def test_a_langchain_agent_gets_structured_output_either_way(base_url: str, strategy: str) -> None:
    from langchain.agents import create_agent, structured_output

    calls = Calls()
    response_format = getattr(structured_output, strategy)(City)
    agent = create_agent(
        chat_model(base_url), [langchain_tool(calls)], response_format=response_format
    )
    state = agent.invoke({"messages": [("user", QUESTION)]})
    assert state["structured_response"] == PARIS and calls.cities == ["Paris"]


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_with_structured_output_works_both_ways(base_url: str, method: str) -> None:
    structured = chat_model(base_url).with_structured_output(City, method=method)
    assert structured.invoke(QUESTION) == PARIS


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_langgraphs_prebuilt_agent_asks_for_its_structured_response_after_the_loop(
    base_url: str,
) -> None:
    from langgraph.prebuilt import create_react_agent

    calls = Calls()
    agent = create_react_agent(chat_model(base_url), [langchain_tool(calls)], response_format=City)
    state = agent.invoke({"messages": [("user", QUESTION)]})
    # the last request ends with the agent's own reply and asks for it again as a City
    assert state["messages"][-1].content == REPLY
    assert state["structured_response"] == PARIS


def test_a_langchain_model_streams_the_reply(base_url: str) -> None:
    pieces = [chunk.content for chunk in chat_model(base_url).stream("Hello there")]
    assert "".join(pieces).startswith("Hello!") and len([p for p in pieces if p]) > 1


# --------------------------------------------------------------------------- OpenAI Agents SDK


def openai_agent(base_url: str, calls: Calls, output_type: Any = None) -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, function_tool
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="-", max_retries=0)
    model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    tool = function_tool(calls.get_weather)
    return Agent(name="weather", model=model, tools=[tool], output_type=output_type)


def no_tracing() -> Any:
    from agents import RunConfig

    return RunConfig(tracing_disabled=True)  # the SDK would send traces to OpenAI


def test_the_openai_agents_sdk_runs_its_tool_loop(base_url: str) -> None:
    from agents import Runner

    calls = Calls()
    result = Runner.run_sync(openai_agent(base_url, calls), QUESTION, run_config=no_tracing())
    assert result.final_output == REPLY and calls.cities == ["Paris"]


def test_the_openai_agents_sdk_gets_its_output_type(base_url: str) -> None:
    from agents import Runner

    calls = Calls()
    agent = openai_agent(base_url, calls, City)
    result = Runner.run_sync(agent, QUESTION, run_config=no_tracing())
    assert result.final_output == PARIS and calls.cities == ["Paris"]


def test_the_openai_agents_sdk_streams_the_reply(base_url: str) -> None:
    from agents import Runner

    async def streamed() -> tuple[list[str], Any]:
        run = Runner.run_streamed(
            openai_agent(base_url, Calls()), QUESTION, run_config=no_tracing()
        )
        deltas = [
            event.data.delta
            async for event in run.stream_events()
            if event.type == "raw_response_event"
            and event.data.type == "response.output_text.delta"
        ]
        return deltas, run.final_output

    deltas, output = asyncio.run(streamed())
    assert "".join(deltas) == output == REPLY and len(deltas) > 1
