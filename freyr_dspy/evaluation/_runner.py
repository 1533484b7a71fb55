"""Run episodes of a benchmark on a program and record every step with its cost."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from freyr_dspy.benchmark import Benchmark, Episode, Step, StepScore, World
from freyr_dspy.program import FreyrProgram, render_conversation, turns_of
from freyr_dspy.schemas import Failure, Result
from freyr_dspy.tools import Toolbox

__all__ = ["StepRecord", "run_episode"]


@dataclass(frozen=True)
class StepRecord:
    """Everything measured about one step: score, cost and what the program did."""

    benchmark: str
    strategy: str
    run: int
    case: str
    episode: str
    step: str
    success: float
    metrics: dict[str, float] = field(default_factory=dict)
    failure_kind: str | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    input_tokens: int = 0
    #: Of ``input_tokens``, those a local backend reused from its prefix cache.
    cached_input_tokens: int = 0
    output_tokens: int = 0
    lm_calls: int = 0
    seconds: float = 0.0
    #: Seconds per role (where a request's time went).
    role_seconds: dict[str, float] = field(default_factory=dict)
    reply: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (values JSON cannot hold are written as their ``str``)."""
        data: dict[str, Any] = json.loads(json.dumps(asdict(self), default=str))
        return data

    @property
    def failure(self) -> Failure | None:
        """The program's typed failure; None when it completed (or in records older than it)."""
        data = self.diagnostics.get("failure")
        return Failure.model_validate(data) if isinstance(data, dict) else None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepRecord:
        """Rebuild a record from ``to_json`` output; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def run_episode(
    benchmark: Benchmark,
    program: FreyrProgram,
    episode: Episode,
    *,
    run: int = 0,
    strategy: str | None = None,
) -> list[StepRecord]:
    """Run the steps of one episode in order and score each.

    A step with ``start_state=None`` continues from the state the previous step left. An
    episode with a ``world`` is a conversation: its app is built once, every step acts on it,
    and each step sees the earlier ones as turns (``program.turns_of``), not a fixed text.

    Args:
        benchmark: scores each step.
        program: the program under test.
        episode: the steps to run.
        run: index of the repetition, recorded on every step.
        strategy: the label recorded as the strategy (default: the program's strategy name;
            the harness passes e.g. a compiled program's label).

    Returns:
        One record per step run (fewer than the episode's steps when it stops on failure).
    """
    label = strategy or program.strategy_name
    records: list[StepRecord] = []
    state: Any = None
    world = episode.world() if episode.world is not None else None
    turns: list[dict[str, str]] = []
    for step in episode.steps:
        before = step.start_state if step.start_state is not None else state
        before = program.coerce_state(before)
        prediction = program(
            message=step.message,
            conversation=step.conversation if world is None else _so_far(episode, turns),
            state=before,
            toolbox=_offered(world, step) if world is not None else step.toolbox,
            calls_only=step.calls_only,
        )
        result: Result = prediction.result
        score: StepScore = benchmark.score(step, before, prediction)
        state = result.state
        turns += turns_of(step.message, result)
        records.append(_record(benchmark, label, episode, step.id, run, score, result))
        if episode.stop_on_failure and score.success < 1.0:
            break
    return records


def _so_far(episode: Episode, turns: list[dict[str, str]]) -> str | list[dict[str, str]]:
    """A conversation's turns so far: the first step's earlier turns (text), then its own."""
    prior = episode.steps[0].conversation
    if not turns or not prior.strip():
        return turns or prior
    return f"{prior.rstrip()}\n{render_conversation(turns)}"


def _offered(world: World, step: Step) -> Toolbox:
    """The tools of the episode's live app that ``step`` offers."""
    if step.offered is None:
        return world.toolbox
    return world.toolbox.subset(names=list(step.offered))


def _record(
    benchmark: Benchmark,
    label: str,
    episode: Episode,
    step_id: str,
    run: int,
    score: StepScore,
    result: Result,
) -> StepRecord:
    total = result.total_usage
    failure_kind = score.failure_kind
    if failure_kind is None and score.success < 1.0 and result.failure:
        failure_kind = "model" if result.failure.model_failed else "retries"
    return StepRecord(
        benchmark=benchmark.name,
        strategy=label,
        run=run,
        case=episode.case,
        episode=episode.id,
        step=step_id,
        success=score.success,
        metrics=score.metrics,
        failure_kind=failure_kind,
        diagnostics={
            **score.diagnostics,
            "failure": _failure_json(result.failure),
            # what a compile replays and fits on: the plan and how each tool of it was judged
            "plan": list(result.intents),
            "verdicts": [v.model_dump() for v in result.verdicts],
        },
        input_tokens=total.input_tokens,
        cached_input_tokens=total.cached_input_tokens,
        output_tokens=total.output_tokens,
        lm_calls=total.lm_calls,
        seconds=total.seconds,
        role_seconds={role: round(usage.seconds, 3) for role, usage in result.usage.items()},
        reply=result.reply,
        calls=[c.model_dump(mode="json") for c in result.calls],
    )


def _failure_json(failure: Failure | None) -> dict[str, str] | None:
    return failure.model_dump() if failure is not None else None
