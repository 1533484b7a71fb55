"""NLT scenarios as domains: parameterless spec-only tools and no state.

In NLT, *selecting* the tools is the result: each topic becomes a tool without parameters
and without a function, so executing it only records the call. Two namings exist, as in
the paper: the topic names themselves (what the NLT selector lists) and one
``check_<snake_name>`` function per topic (what structured / native tool calling uses).

``nlt-alex`` and ``nlt-sage`` are registered for ``freyr run --domain nlt-alex``; they read
the scenario from the default data directory (``../shared/benchmarks``) when a program is
built. Benchmarks build their domain from ``make_domain`` with the data directory they got.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from freyr_dspy.benchmarks.nlt._data import Scenario, function_name, load_scenario, scenario_path
from freyr_dspy.domains import Domain, register_domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.prompting import NO_STATE
from freyr_dspy.settings import Settings
from freyr_dspy.tools import Tool, Toolbox

__all__ = ["Naming", "make_domain", "make_toolbox"]

Naming = Literal["topic", "function"]

SCENARIOS = ("alex", "sage")


def make_toolbox(scenario: Scenario, naming: Naming = "topic") -> Toolbox:
    """Build one parameterless, spec-only tool per topic.

    Args:
        scenario: the loaded scenario.
        naming: ``topic`` (``Past Purchases``) or ``function`` (``check_past_purchases``).
    """
    tools = []
    for topic in scenario.tools:
        if naming == "function":
            name, description = function_name(topic.name), f"For {topic.name} ({topic.description})"
        else:
            name, description = topic.name, topic.description
        tools.append(Tool(name=name, description=description, extra={"topic": topic.name}))
    return Toolbox(tools)


def _no_state(state: Any) -> str:
    return NO_STATE


def make_domain(scenario: Scenario, naming: Naming = "topic") -> Domain:
    """Wrap a scenario as a stateless domain with its tools."""
    return Domain(
        name=f"nlt-{scenario.scenario}",
        description=f"NLT scenario {scenario.scenario!r}: {len(scenario.tools)} topic tools",
        make_toolbox=lambda: make_toolbox(scenario, naming),
        renderers={"none": _no_state},
        example_message=scenario.inputs[0].message if scenario.inputs else "",
        data_names=lambda: scenario.data_names,
    )


def _default_toolbox(name: str) -> Toolbox:
    # NOTE: no data-dir argument reaches a registered domain; use the default location.
    try:
        path = scenario_path(Settings().resolve_data_dir(), name)
    except ConfigError as exc:
        raise ConfigError(
            f"domain nlt-{name} reads nlt/{name}.json from ../shared/benchmarks, which does "
            f"not exist next to the current folder; run from the project folder, or build the "
            f"domain from any data directory with make_domain(load(DATA_DIR, {name!r}))"
        ) from exc
    return make_toolbox(load_scenario(path))


def _register(name: str) -> None:
    register_domain(
        Domain(
            name=f"nlt-{name}",
            description=f"NLT scenario {name!r} (topics from <data>/nlt/{name}.json)",
            make_toolbox=lambda: _default_toolbox(name),
            renderers={"none": _no_state},
        )
    )


def load(data_dir: Path, name: str) -> Scenario:
    """Load the scenario ``name`` from a data directory."""
    return load_scenario(scenario_path(data_dir, name))


for _name in SCENARIOS:
    _register(_name)
