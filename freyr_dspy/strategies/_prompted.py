"""Strategy ``prompted``: prompt-injected tool calling (He 2024), the text-only baseline.

One role (``prompted``) sees the tool list and the JSON call format in its system prompt and
answers with JSON calls or a final answer. Each call is executed and its result goes back to
the model as an observation; the loop runs until the model answers in plain text.

The loop also ends when ``max_retries`` calls have failed (the retry budget), when the model
repeats a call that already succeeded (tiny models loop), or after a turn cap.
"""

from __future__ import annotations

from freyr_dspy.prompting import NO_OBSERVATIONS
from freyr_dspy.roles import Role, ToolRequest, extract_calls
from freyr_dspy.schemas import CallRecord, Failure, Result
from freyr_dspy.strategies import register_strategy
from freyr_dspy.strategies._base import StrategyModule
from freyr_dspy.strategies._policies import CallPolicy
from freyr_dspy.strategies._run import Run

__all__ = []

#: Turns beyond the retry budget: enough for several calls in a row, bounded for small models.
MAX_CALL_TURNS = 4


def _key(request: ToolRequest, run: Run) -> tuple[str, str]:
    tool = run.toolbox.resolve(request.tool)
    return (tool.name if tool else request.tool, repr(sorted(request.parameters.items())))


def _call(run: Run, request: ToolRequest, policy: CallPolicy) -> CallRecord:
    """Execute one requested call; a retry of a failed call updates that call's record."""
    tool = run.toolbox.resolve(request.tool)
    name = tool.name if tool else request.tool
    tools = run.tools(policy)
    arguments, dropped = tools.grounded(name, dict(request.parameters))
    outcome = tools.execute(name, arguments)
    previous = run.calls[-1] if run.calls else None
    if previous is not None and previous.tool == name and not previous.outcome.ok:
        record = CallRecord(
            tool=name,
            arguments=arguments,
            outcome=outcome,
            attempts=previous.attempts + 1,
            errors=[*previous.errors, previous.outcome.message],
            dropped=dropped,
        )
        run.ledger.retry_last(record)
    else:
        record = CallRecord(tool=name, arguments=arguments, outcome=outcome, dropped=dropped)
        run.ledger.add_call(record)
    return record


def _observation(record: CallRecord) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in record.arguments.items())
    return f"Observation: {record.tool}({args}) -> {record.outcome.render()}"


def run_prompted(run: Run, role: Role, policy: CallPolicy) -> Result:
    """Loop: model -> JSON calls -> execute -> observations -> model, until a plain answer.

    ``policy``: its ``max_retries`` failed calls end the loop, its grounding.
    """
    catalog = run.toolbox.catalog("full")
    observations: list[str] = []
    done: set[tuple[str, str]] = set()
    failures = 0
    for _turn in range(1 + policy.max_retries + MAX_CALL_TURNS):
        prediction = run.call(
            role,
            conversation=run.conversation,
            message=run.message,
            observations="\n".join(observations) or NO_OBSERVATIONS,
            tools=catalog,
        )
        reply = extract_calls(prediction.response)
        fresh = [c for c in reply.calls if _key(c, run) not in done]
        if not fresh:  # a plain answer, or only repeats of calls that already succeeded
            return _finish(run, reply.text)
        for request in fresh:
            record = _call(run, request, policy)
            observations.append(_observation(record))
            if record.outcome.ok:
                done.add(_key(request, run))
            else:
                failures += 1
        if failures > policy.max_retries:
            detail = "retries exhausted: " + run.calls[-1].outcome.message
            return _finish(run, "", Failure(kind="retries", detail=detail))
    return _finish(
        run, "", Failure(kind="turn_limit", detail="no final answer within the turn limit")
    )


def _finish(run: Run, reply: str, failure: Failure | None = None) -> Result:
    intents = [c.tool for c in run.calls if c.outcome.ok]
    return run.result(reply, intents, failure)


class Prompted(StrategyModule):
    """Prompt-injected tool calling (see the module docstring)."""

    prompted: Role

    name = "prompted"
    description = "He 2024: tool list + JSON call format in the system prompt, observations loop"

    def __init__(self) -> None:
        super().__init__(("prompted",))

    def run(self, run: Run) -> Result:
        """Loop: JSON calls and observations until a plain-text answer."""
        return run_prompted(run, self.prompted, self.calling)


register_strategy(Prompted)
