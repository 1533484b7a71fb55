"""The benchmark contract shared by ``freyr eval``, ``freyr compile`` and ``freyr search``.

A benchmark turns its data directory into **episodes**. An episode is the unit that is run,
checkpointed and resumed: one request (NLT, CallNavi), one bootstrap-mode step (LLMaker), or
a whole test case whose steps carry the state forward (LLMaker iterative mode). Each step is
scored into a ``StepScore``; the evaluation harness adds cost and aggregates. Gold tool
calls, when a benchmark records them, follow one convention (``gold_calls``) so that the
metrics, GEPA's feedback and the gold-labelled demos can read them, and a training step becomes
a ``dspy.Example`` one way (``step_example``).

This module sits below evaluation, compiling, artifacts and datasets, which all take a
``Benchmark``, and above the program a benchmark builds. The built-in benchmarks import those
packages, so the contract is not in ``freyr_dspy.benchmarks`` with them (that would make the
two import each other); ``freyr_dspy.benchmarks`` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import dspy
from pydantic import BaseModel, ConfigDict, Field

from freyr_dspy.program import FreyrProgram
from freyr_dspy.registry import Registry
from freyr_dspy.tools import Toolbox

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Episode",
    "EvalOptions",
    "GoldCall",
    "Step",
    "StepScore",
    "World",
    "get_benchmark",
    "gold_calls",
    "load_all",
    "register_benchmark",
    "spread",
    "step_example",
]

_T = TypeVar("_T")


class World(Protocol):
    """The live app an episode's steps act on: its tools, and its state to check at the end.

    A conversation's turns change the same app (a cart, a calendar): built fresh each time
    the episode runs (``Episode.world``), offered to every step as its toolbox.
    """

    @property
    def toolbox(self) -> Toolbox:
        """The app's operations as tools acting on it."""
        ...

    def snapshot(self) -> Any:
        """The app's state now, as JSON."""
        ...


@dataclass(frozen=True)
class Step:
    """One request of an episode.

    ``start_state`` is the state the step starts from; None means "the state the previous
    step left" (iterative mode). ``expected`` holds the benchmark's gold data for scoring.
    """

    id: str
    message: str
    start_state: Any = None
    conversation: str = ""
    expected: dict[str, Any] = field(default_factory=dict)
    #: The tools offered for this step instead of the program's own (a row's own tools);
    #: None keeps the program's toolbox.
    toolbox: Toolbox | None = None
    #: The score reads the calls only: the program stops once they are made, without the
    #: model call that reports them (``FreyrProgram.forward(calls_only=True)``).
    calls_only: bool = False
    #: In an episode with a ``world``: the names of its tools this step offers (None: all).
    offered: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Episode:
    """Steps run in order on one program; ``case`` groups episodes in reports (T1, alex...)."""

    id: str
    case: str
    steps: tuple[Step, ...]
    #: Stop the episode at the first failed step (LLMaker iterative mode does).
    stop_on_failure: bool = False
    #: The toolbox its requests are asked against, by name (a dataset row's ``toolbox``):
    #: reports and the compile's guard count per toolbox; "" when the benchmark has one.
    toolbox: str = ""
    #: Builds the live app the steps act on, fresh for each run of the episode; its steps are
    #: then the turns of one conversation: each sees the earlier ones (what was asked, the
    #: calls made and what they returned, the replies) and acts on the same app.
    world: Callable[[], World] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class StepScore:
    """How one step went. ``success`` is in [0, 1]; ``metrics`` holds named sub-scores."""

    success: float
    metrics: dict[str, float] = field(default_factory=dict)
    failure_kind: str | None = None  # parse | domain | design | retries | model | ...
    diagnostics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvalOptions:
    """Options of one evaluation that a benchmark may use when building episodes/programs."""

    data_dir: Path
    mode: str = "bootstrap"
    limit: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


#: The program inputs of an example; everything else on it is gold data. ``toolbox`` is
#: None unless the example offers its own tools.
INPUT_FIELDS = ("message", "conversation", "state", "toolbox")


class GoldCall(BaseModel):
    """A call a correct program makes: a row of a trainset, and what the metrics compare.

    ``arguments`` left out of a trainset row is ``{}`` (a call without arguments); it is None
    only where the gold names the tool alone (``gold_calls``), and then goes unchecked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    arguments: dict[str, Any] | None = Field(default_factory=dict)


def step_example(step: Step) -> dspy.Example:
    """Turn a training step into a ``dspy.Example`` (inputs + the gold step).

    The step must carry its own ``start_state``: optimizers run examples in any order.
    """
    return dspy.Example(
        message=step.message,
        conversation=step.conversation,
        state=step.start_state,
        toolbox=step.toolbox,
        step=step,
    ).with_inputs(*INPUT_FIELDS)


def gold_calls(step: Step) -> list[GoldCall] | None:
    """Read the gold tool calls of a step, or None when the benchmark records none.

    Convention: ``expected["calls"]`` is a list of ``{"tool" | "name": str, "arguments" |
    "args": dict}``; ``expected["tools"]`` (names only) is accepted when arguments are not
    known. An empty list means "no tool: reply in conversation".
    """
    calls = step.expected.get("calls")
    if isinstance(calls, list):
        return [
            GoldCall(
                tool=str(c.get("tool") or c.get("name")),
                arguments=c.get("arguments", c.get("args")),
            )
            for c in calls
            if isinstance(c, dict)
        ]
    tools = step.expected.get("tools")
    if isinstance(tools, list):
        return [GoldCall(tool=str(t), arguments=None) for t in tools]
    return None


class Benchmark(Protocol):
    """What every benchmark provides."""

    name: str
    description: str
    #: Strategies this benchmark can run, in the order reports list them.
    strategies: tuple[str, ...]

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """Load the test episodes from the data directory."""
        ...

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """Build a fresh (unassigned) program for a strategy."""
        ...

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Score one step from the state before it and the program's prediction."""
        ...

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """The project's own training/dev episodes (``trainsets/*.jsonl``), never test data.

        Every step of a training episode has an explicit ``start_state`` so it can become a
        standalone ``dspy.Example`` for the optimizers.
        """
        ...


#: name -> benchmark. The built-in ones are plugins (``freyr_dspy.benchmarks``): they register
#: themselves the first time a name is missing.
BENCHMARKS: Registry[Benchmark] = Registry("benchmark")
load_all = BENCHMARKS.load_all
get_benchmark = BENCHMARKS.get_named


def register_benchmark(benchmark: Benchmark) -> None:
    """Add (or replace) a benchmark under its name."""
    BENCHMARKS.register(benchmark.name, benchmark)


def spread(episodes: Sequence[_T], limit: int | None) -> list[_T]:
    """``limit`` episodes (or rows) evenly spaced over ``episodes``, in order (all when None).

    Trainsets are written topic by topic (first rooms, then enemies, ...): the first N rows
    would measure one kind of request, N spread rows measure them all.
    """
    if not limit or limit >= len(episodes):
        return list(episodes)
    return [episodes[i * len(episodes) // limit] for i in range(limit)]
