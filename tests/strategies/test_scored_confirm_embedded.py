"""Scored confirm verdicts on the real default model (``freyr+scored_confirm``).

The plan is given (two related tools); the confirm role's verdicts are scored on Qwen 1.5B: the
asked tool is kept and the related one dropped, and nothing is kept when no tool fits. With
``refill`` the dropped entry becomes the second of two calls the request asks for.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result, RoleModel, Sampling
from freyr_dspy.strategies._freyr import confirm_intents, freed_slots
from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._run import Run
from freyr_dspy.strategies.retry import call_until_exhausted
from freyr_dspy.tools import Tool, Toolbox

pytestmark = pytest.mark.embedded

MODEL = "embedded/qwen2.5-coder-1.5b"


def deploy_service(service: str, version: str, environment: str) -> str:
    """Deploy a version of a service to an environment.

    Args:
        service: the service's name.
        version: the version to deploy.
        environment: where to deploy it.
    """
    return f"{service} {version} deployed to {environment}"


def scale_service(service: str, replicas: int, environment: str) -> str:
    """Set how many replicas of a service run in an environment.

    Args:
        service: the service's name.
        replicas: how many replicas.
        environment: the environment.
    """
    return f"{service}: {replicas} replicas in {environment}"


def greedy_program(functions: list[Callable[..., str]]) -> FreyrProgram:
    """A FREYR program over ``functions``, every role played by the 1.5B, greedy."""
    prog = FreyrProgram(toolbox=Toolbox([Tool.from_function(f) for f in functions]))
    greedy = RoleModel(model=MODEL, sampling=Sampling(temperature=0.0, seed=0))
    return prog.apply_assignment(dict.fromkeys(prog.role_names, greedy))


def confirmed_plan(functions: list[Callable[..., str]], message: str) -> tuple[list[str], int]:
    """The plan of every tool in ``functions`` after scored confirm, and the scorings made."""
    prog = greedy_program(functions)
    plan = [f.__name__ for f in functions]

    def confirm_only(run: Run) -> Result:
        return run.result("", confirm_intents(run, prog.role("confirm"), plan, scored=True))

    result = prog.run_step(prog.start_run(message, ending="calls"), confirm_only)
    return result.intents, result.usage["confirm"].lm_calls


def test_the_asked_tool_is_kept_and_the_related_one_dropped() -> None:
    message = "Deploy version 2.1 of the billing service to staging."
    assert confirmed_plan([deploy_service, scale_service], message) == (["deploy_service"], 2)


def test_nothing_is_kept_when_no_tool_fits() -> None:
    message = "Book me a table for two in Bergen tonight."
    assert confirmed_plan([deploy_service, scale_service], message) == ([], 2)


def test_a_dropped_entry_becomes_the_second_call_asked_for() -> None:
    # the plan the 1.5B writes for two deployments: the tool once, a related tool second
    plan = ["deploy_service", "scale_service"]
    prog = greedy_program([deploy_service, scale_service])

    def refilled(run: Run) -> Result:
        kept = confirm_intents(run, prog.role("confirm"), plan, scored=True)
        call_until_exhausted(
            run, prog.role("parameters"), kept, CallPolicy(), freed_slots(plan, kept)
        )
        return run.result("", kept)

    message = "Deploy version 3.4 of the payments service to dev and to staging."
    result = prog.run_step(prog.start_run(message, ending="calls"), refilled)
    assert result.intents == ["deploy_service"]
    calls = [(call.tool, call.arguments.get("environment")) for call in result.calls]
    assert calls == [("deploy_service", "dev"), ("deploy_service", "staging")]
