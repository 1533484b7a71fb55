"""Conversations that act on state: a dataset of multi-turn requests to a live app.

A conversation file holds one conversation a line::

    {"id": "cart-1", "toolbox": "cart", "category": "cart",
     "state": {"catalogue": [...], "lines": [...], "coupons": {"SAVE10": 10}},
     "turns": [
       {"message": "What's in my cart?", "calls": [{"name": "view_cart", "arguments": {}}]},
       {"message": "Drop the cheapest item and apply SAVE10",
        "calls": [{"name": "remove_item", "arguments": {"sku": "SKU-3"}},
                  {"name": "apply_coupon", "arguments": {"code": "SAVE10"}}]}],
     "end_state": {...}}

- ``toolbox`` names an app of the tools module (``--tools-module apps.py:APPS``: a mapping of
  names to classes, or factories, built as ``App(**state)``); its public methods are the tools
  (``Toolbox.from_object``), acting on one live app for the whole conversation.
- Each turn's ``calls`` are the calls a right answer makes (as in a one-request row: ``[]``
  for none, ``any_of`` alternatives, ``ordered``). Calls of the app's *reading* methods
  (``__freyr_reads__`` on the class: they change nothing) may be made beyond those listed: a
  program that looks the cart up again loses nothing. ``tools`` names the methods offered
  from that turn on (a tool added later); by default all are.
- ``end_state`` is the app's ``snapshot()`` after a right conversation; left out, it is the
  snapshot after the expected calls are made on a fresh app (which also checks them: a call
  that fails there is a bad row).

A turn is right when its calls are (``check_calls`` on the calls that change the app, with
reading calls free); a conversation when every turn is and its end state is the expected one.
``freyr eval`` scores conversations (each turn a step of one episode that carries the app and
the turns before it); ``freyr compile`` learns from each turn alone, shown the expected turns
before it and the app in the state they left (``train_episodes``).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freyr_dspy.benchmark import Episode, EvalOptions, Step, StepScore
from freyr_dspy.datasets._checker import check_calls, render_call
from freyr_dspy.datasets._format import ExpectedCall
from freyr_dspy.errors import ConfigError, DataError
from freyr_dspy.program import FreyrProgram, render_conversation, turns_of
from freyr_dspy.schemas import CallRecord, Result
from freyr_dspy.tools import Toolbox

__all__ = [
    "AppWorld",
    "ConversationBenchmark",
    "ConversationExample",
    "apps_from_module",
    "check_turn",
    "is_conversation_file",
    "read_conversations",
]

AppFactory = Callable[..., object]


class ConversationTurn(BaseModel):
    """One turn: the user's message and the calls that answer it."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1)
    calls: list[ExpectedCall]
    ordered: bool = False
    tools: list[str] | None = None


class ConversationExample(BaseModel):
    """One conversation with one app (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    toolbox: str = Field(min_length=1)
    category: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    turns: list[ConversationTurn] = Field(min_length=1)
    end_state: dict[str, Any] | None = None


def is_conversation_file(path: Path) -> bool:
    """Whether ``path``'s first row is a conversation (it has ``turns``)."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                try:
                    return "turns" in json.loads(line)
                except json.JSONDecodeError:
                    return False
    return False


def apps_from_module(spec: str) -> dict[str, AppFactory]:
    """The apps of ``MODULE:ATTRIBUTE`` (a mapping of names to classes or factories).

    ``MODULE`` is a dotted module name or the path of a ``.py`` file.

    Raises:
        ConfigError: a malformed spec, a module that fails to import, or no mapping of apps.
    """
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"--tools-module {spec!r}: expected MODULE:ATTRIBUTE, e.g. apps.py:APPS")
    try:
        module = _import(module_name)
    except (ImportError, OSError) as exc:
        raise ConfigError(f"--tools-module {spec!r}: cannot import {module_name}: {exc}") from exc
    apps = getattr(module, attribute, None)
    if not isinstance(apps, Mapping) or not apps or not all(map(callable, apps.values())):
        raise ConfigError(
            f"--tools-module {spec!r}: conversations need a mapping of app names to classes"
        )
    return dict(apps)


def _import(name: str) -> Any:
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name).resolve()
    spec = importlib.util.spec_from_file_location(f"freyr_apps_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no Python module at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look the module up
    spec.loader.exec_module(module)
    return module


def read_conversations(path: Path, apps: Mapping[str, AppFactory]) -> list[ConversationExample]:
    """Read and check a conversation file against its apps.

    Raises:
        DataError: ``path:line`` and the first problem of the first bad row.
    """
    found = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            found.append(_checked(_parsed(path, number, line), apps, path, number))
    if not found:
        raise DataError(path, 1, "no conversation in the file")
    return found


def _parsed(path: Path, number: int, line: str) -> ConversationExample:
    try:
        row = ConversationExample.model_validate(json.loads(line))
    except json.JSONDecodeError as exc:
        raise DataError(path, number, f"not JSON: {exc.msg}") from exc
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise DataError(path, number, f"{where}: {error['msg']}") from exc
    return row if row.id else row.model_copy(update={"id": f"{path.stem}-{number}"})


def _checked(
    row: ConversationExample, apps: Mapping[str, AppFactory], path: Path, number: int
) -> ConversationExample:
    """The row with its end state: replaying its expected calls checks them too."""
    if row.toolbox not in apps:
        raise DataError(path, number, f"toolbox {row.toolbox!r} is none of {', '.join(apps)}")
    try:
        world = AppWorld.build(apps[row.toolbox], row.state)
    except Exception as exc:
        raise DataError(path, number, f"state does not build {row.toolbox}: {exc}") from exc
    for index, turn in enumerate(row.turns, 1):
        for call in turn.calls:
            outcome = world.toolbox.execute(call.name, call.plain_arguments()).outcome
            if not outcome.ok:
                raise DataError(path, number, f"turn {index}: {call.name}: {outcome.message}")
    if row.end_state is None:
        return row.model_copy(update={"end_state": world.snapshot()})
    return row


@dataclass
class AppWorld:
    """A live app and its tools: what one run of a conversation acts on."""

    app: Any
    toolbox: Toolbox

    @classmethod
    def build(cls, factory: AppFactory, state: Mapping[str, Any]) -> AppWorld:
        """A fresh app from ``state`` (a deep copy: the row's own is never changed)."""
        app = factory(**copy.deepcopy(dict(state)))
        return cls(app, Toolbox.from_object(app))

    def snapshot(self) -> Any:
        """The app's state now."""
        return self.app.snapshot()

    @property
    def reads(self) -> frozenset[str]:
        """The names of the app's tools that only read (``__freyr_reads__``: ``read_only``)."""
        return frozenset(tool.name for tool in self.toolbox if tool.read_only)


@dataclass
class ConversationBenchmark:
    """Conversations with live apps, scored turn by turn and by the app's end state.

    Args:
        apps: app name -> class (or factory) built as ``App(**state)``.
        rows: the conversations ``freyr eval`` scores.
        train_rows: what ``freyr compile`` learns from (default: ``rows``), turn by turn.
    """

    apps: Mapping[str, AppFactory]
    rows: Sequence[ConversationExample]
    train_rows: Sequence[ConversationExample] | None = None
    name: str = "conversations"
    description: str = "conversations with live apps: each turn's calls, and the end state"
    strategies: tuple[str, ...] = ("freyr", "native", "prompted", "nlt", "gated")
    dev_rows: Sequence[Any] | None = None
    #: The live app of each conversation now running, by its id (the end state is read there).
    _live: dict[str, AppWorld] = field(default_factory=dict)

    def __post_init__(self) -> None:
        first = self.rows[0] if self.rows else None
        self.program_toolbox = (
            AppWorld.build(self.apps[first.toolbox], first.state).toolbox.spec_only()
            if first is not None
            else Toolbox([])
        )

    @property
    def tool_agnostic(self) -> bool:
        """Conversations bring their own apps: an artifact is not tied to one toolbox."""
        return True

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """One episode per conversation, a step per turn, all acting on one live app."""
        episodes = [self._conversation(row) for row in self.rows]
        return episodes[: options.limit] if options.limit else episodes

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """Each training turn alone: the expected turns before it shown, its app in their state."""
        return self.turn_episodes(self.rows if self.train_rows is None else self.train_rows)

    def turn_episodes(self, rows: Sequence[ConversationExample]) -> list[Episode]:
        """Each turn of ``rows`` as an episode of its own (see ``train_episodes``)."""
        return [self._turn_alone(row, index) for row in rows for index in range(len(row.turns))]

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """A plain tool-use program on the first app's tools (each episode offers its own)."""
        return FreyrProgram(toolbox=self.program_toolbox, strategy=strategy)

    def devset(self) -> None:
        """Compile splits the training turns: no separate dev rows."""
        return None

    def score(self, step: Step, before: Any, prediction: Any) -> StepScore:
        """The turn's calls (reading calls free); on the last turn, the app's end state too."""
        result: Result = prediction.result
        world = self._live.get(str(step.expected["conversation"]))
        return check_turn(step, result.calls, world, self.program_toolbox)

    def _conversation(self, row: ConversationExample) -> Episode:

        key = str(row.id)
        factory = self.apps[row.toolbox]

        def world() -> AppWorld:
            self._live[key] = AppWorld.build(factory, row.state)
            return self._live[key]

        steps = tuple(self._step(row, index) for index in range(len(row.turns)))
        return Episode(
            id=key,
            case=row.category or row.toolbox,
            steps=steps,
            toolbox=row.toolbox,
            world=world,
        )

    def _step(self, row: ConversationExample, index: int) -> Step:
        turn = row.turns[index]
        expected: dict[str, Any] = {
            "conversation": row.id,
            "calls": [{"name": c.name, "arguments": c.plain_arguments()} for c in turn.calls],
            "checks": [c.as_json() for c in turn.calls],
            "ordered": turn.ordered,
        }
        if index == len(row.turns) - 1:
            expected["end_state"] = row.end_state
        return Step(
            id=f"{row.id}/{index + 1}",
            message=turn.message,
            expected=expected,
            offered=_offered(row, index),
        )

    def _turn_alone(self, row: ConversationExample, index: int) -> Episode:
        """Turn ``index`` as a conversation of its own: the expected turns before it replayed."""
        key = f"{row.id}/{index + 1}"
        factory = self.apps[row.toolbox]
        before, history = _replayed(factory, row, index)

        def world() -> AppWorld:
            self._live[key] = AppWorld.build(factory, before)
            return self._live[key]

        step = self._step(row, index)
        expected = {**step.expected, "conversation": key}
        expected.pop("end_state", None)
        alone = Step(
            id=step.id,
            message=step.message,
            conversation=render_conversation(history),
            expected=expected,
            offered=step.offered,
            toolbox=AppWorld.build(factory, before).toolbox.spec_only(),
        )
        return Episode(
            id=key, case=row.category or row.toolbox, steps=(alone,), toolbox=row.toolbox,
            world=world,
        )  # fmt: skip


def check_turn(
    step: Step, calls: Sequence[CallRecord], world: AppWorld | None, toolbox: Toolbox
) -> StepScore:
    """One turn's calls against the expected ones; on the last turn, the app's end state too.

    Calls of reading methods beyond the expected ones are free. ``world``: the live app
    the turn acted on (None: no state check; ``toolbox`` names the tools). What a client of
    ``freyr serve`` ran counts the same as what the program ran.
    """
    reads = world.reads if world is not None else frozenset()
    expected = [ExpectedCall.model_validate(c) for c in step.expected["checks"]]
    made = _counted(calls, expected, reads)
    tools = world.toolbox if world is not None else toolbox
    check = check_calls(expected, made, tools, ordered=step.expected["ordered"])
    diagnostics: dict[str, Any] = {
        "expected": [render_call(c.name, c.plain_arguments()) for c in expected],
        "produced": [render_call(name, arguments) for name, arguments in made],
    }
    state_ok = True
    if "end_state" in step.expected and world is not None:
        state_ok = world.snapshot() == step.expected["end_state"]
        if not state_ok:
            diagnostics["end_state"] = "the app's end state is not the expected one"
    if not check.ok:
        diagnostics["feedback"] = check.feedback
    return StepScore(
        success=float(check.ok and state_ok),
        metrics={"tools": float(check.names_ok), "state": float(state_ok)},
        failure_kind=check.kind or (None if state_ok else "state"),
        diagnostics=diagnostics,
    )


def _offered(row: ConversationExample, index: int) -> tuple[str, ...] | None:
    """The tools a turn offers: those the latest turn up to it names (None: all)."""
    for turn in reversed(row.turns[: index + 1]):
        if turn.tools is not None:
            return tuple(turn.tools)
    return None


def _replayed(
    factory: AppFactory, row: ConversationExample, index: int
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The app's state after the expected turns before ``index``, and those turns."""
    world = AppWorld.build(factory, row.state)
    history: list[dict[str, str]] = []
    for turn in row.turns[:index]:
        calls = []
        for call in turn.calls:
            arguments = call.plain_arguments()
            execution = world.toolbox.execute(call.name, arguments)
            calls.append(CallRecord(tool=call.name, arguments=arguments, outcome=execution.outcome))
        reply = "Done." if calls else ""
        result = Result(reply=reply, strategy="gold", calls=calls)
        history += turns_of(turn.message, result)
    return world.snapshot(), history


def _counted(
    calls: Sequence[CallRecord], expected: Sequence[ExpectedCall], reads: frozenset[str]
) -> list[tuple[str, Mapping[str, Any]]]:
    """The calls that made something happen: extra calls of reading methods are free."""
    wanted: dict[str, int] = {}
    for want in expected:
        wanted[want.name] = wanted.get(want.name, 0) + 1
    made: list[tuple[str, Mapping[str, Any]]] = []
    for call in calls:
        if not call.outcome.ok:
            continue
        if call.tool in reads and wanted.get(call.tool, 0) <= 0:
            continue
        wanted[call.tool] = wanted.get(call.tool, 0) - 1
        made.append((call.tool, call.arguments))
    return made
