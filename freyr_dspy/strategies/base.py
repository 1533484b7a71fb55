"""The machinery every strategy shares: the ``StrategyModule`` and one ``Run`` per program call.

A strategy is a DSPy module that holds exactly the roles it calls, as attributes named by the
role ids (``self.intent``, ``self.parameters``, ...); a strategy that wraps another holds it as
a sub-module (``Gated(inner=Nlt())``). Its settings are typed constructor arguments, and
``config()`` gives them back as JSON so an artifact can rebuild the same strategy.

A ``Run`` holds the request, the toolbox, the working state, the calls made and the usage of
each role. Strategies call roles by name and execute tools through it, so accounting, retries
with feedback and state safety live in one place.
"""

from __future__ import annotations

import inspect
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import dspy
from dspy.utils.exceptions import LMError

from freyr_dspy.blame import RetryLimits, blame_note, blamed_arguments
from freyr_dspy.errors import (
    BackendError,
    ConfigError,
    FakeLMError,
    UnknownRoleError,
    exception_chain,
)
from freyr_dspy.grounding import (
    Evidence,
    copied_examples,
    examples_of,
    ground_arguments,
    tool_without_examples,
    unstated_required,
)
from freyr_dspy.roles import Role, role_class
from freyr_dspy.roles.parameters import (
    give_up_feedback,
    gives_up,
    parameters_contract,
    several_calls_contract,
    several_calls_note,
)
from freyr_dspy.schemas import CallRecord, Failure, FailureKind, Outcome, Result, RoleUsage
from freyr_dspy.tools import Toolbox
from freyr_dspy.tools.toolbox import render_tool_spec

if TYPE_CHECKING:
    from freyr_dspy.schemas import RoleModel
    from freyr_dspy.tools import CatalogLevel

__all__ = [
    "SPLIT_MOST",
    "FunctionStrategy",
    "ModelFailure",
    "ProgramView",
    "Run",
    "StrategyFactory",
    "StrategyModule",
    "accepted_config",
    "has_lm",
    "setting_names",
    "unknown_tools_failure",
]


class StrategyModule(dspy.Module):
    """A way of composing roles into one program call, as a DSPy module holding those roles.

    Subclasses set ``name`` and ``description``, create their roles in ``__init__`` (through
    ``super().__init__(roles)``) and implement ``run``. ``named_predictors()`` walks the roles
    and sub-strategies, so compiled demos and instructions are keyed by where they live.
    """

    #: The registry name.
    name: str = ""
    #: One line for listings.
    description: str = ""

    def __init__(self, roles: tuple[str, ...] = ()) -> None:
        super().__init__()
        for role in roles:
            setattr(self, role, role_class(role)())

    def config(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this strategy, as JSON (none by default).

        ``factory(**strategy.config())`` builds the same strategy, without its demos.
        """
        return {}

    @property
    def role_names(self) -> tuple[str, ...]:
        """Every role this strategy calls: its own, then those of its sub-strategies, in order."""
        return tuple(name for name, _ in self._roles())

    def role(self, name: str) -> Role:
        """The module playing role ``name`` (in this strategy or a sub-strategy).

        Raises:
            UnknownRoleError: when the strategy has no such role.
        """
        for role_name, module in self._roles():
            if role_name == name:
                return module
        raise UnknownRoleError(name, self.role_names)

    def _roles(self) -> Iterator[tuple[str, Role]]:
        # NOTE: attributes keep their assignment order, which is the order roles are called in.
        for attribute, value in vars(self).items():
            if isinstance(value, Role):
                yield attribute, value
            elif isinstance(value, StrategyModule):
                yield from value._roles()

    def run(self, run: Run) -> Result:
        """Handle one request and return its result."""
        raise NotImplementedError


class StrategyFactory(Protocol):
    """What the strategy registry holds: builds a fresh module from a strategy's settings.

    Every program needs its own roles, hence a factory. A ``StrategyModule`` subclass is one
    (its constructor takes the settings); so is a ``FunctionStrategy``.
    """

    @property
    def name(self) -> str:
        """The registry name."""
        ...

    @property
    def description(self) -> str:
        """One line for listings."""
        ...

    def __call__(self, *args: Any, **kwargs: Any) -> StrategyModule:
        """A fresh strategy module built from the given settings."""
        ...


def accepted_config(factory: StrategyFactory, config: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``config`` that the strategy's constructor takes.

    Benchmarks have settings that apply to some of their strategies only (``respond`` to
    ``nlt``, ``catalog`` to CallNavi's own): each strategy gets the ones it declares.
    """
    names = set(setting_names(factory))
    return {key: value for key, value in config.items() if key in names}


def setting_names(factory: StrategyFactory) -> list[str]:
    """The settings a strategy factory takes, in its constructor's order."""
    # NOTE: DSPy's module metaclass hides a class's own signature behind ``*args, **kwargs``.
    if isinstance(factory, type):
        target = next(vars(c)["__init__"] for c in factory.__mro__ if "__init__" in vars(c))
    else:
        target = factory
    parameters = inspect.signature(target).parameters.values()
    positional_or_keyword = (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    return [p.name for p in parameters if p.name != "self" and p.kind in positional_or_keyword]


class ProgramView(Protocol):
    """What strategies read of the program a run belongs to (``FreyrProgram`` provides it).

    A protocol rather than the class, so that strategies do not import the program that
    imports them.
    """

    strategy_name: str
    max_retries: int
    ground_arguments: bool
    catalog_level: CatalogLevel
    assignment: dict[str, RoleModel]

    @property
    def role_names(self) -> tuple[str, ...]:
        """The roles of the program's strategy."""
        ...

    def role(self, name: str) -> Role:
        """The module playing role ``name``."""
        ...


@dataclass(frozen=True)
class FunctionStrategy:
    """A strategy factory for a plain function ``fn(run) -> Result`` over fixed roles.

    For small strategies (benchmark probes, tests) that need no class of their own.
    """

    name: str
    roles: tuple[str, ...]
    fn: Callable[[Run], Result]
    description: str = ""

    def __call__(self) -> StrategyModule:
        """A fresh module holding the roles; it takes no settings."""
        return _FunctionModule(self)


class _FunctionModule(StrategyModule):
    def __init__(self, factory: FunctionStrategy) -> None:
        super().__init__(factory.roles)
        self.name, self.description = factory.name, factory.description
        self._fn = factory.fn

    def run(self, run: Run) -> Result:
        return self._fn(run)


#: Most calls of one tool the parameters role may write at once with ``Run.split_calls``.
SPLIT_MOST = 4


class ModelFailure(Exception):
    """Internal signal: a role's model failed; the run stops and reports what it has."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


@dataclass
class Run:
    """The mutable context of one program call."""

    program: ProgramView
    toolbox: Toolbox
    message: str
    conversation: str
    state: Any
    render_state: Callable[[Any], str]
    calls: list[CallRecord] = field(default_factory=list)
    usage: dict[str, RoleUsage] = field(default_factory=dict)
    #: The tools planned so far, kept here so a model failure later in the run still reports them.
    intents: list[str] = field(default_factory=list)
    #: (tool, argument, value) copies of a description's example already refused once.
    refused_copies: set[tuple[str, str, str]] = field(default_factory=set)
    #: Keep the values an error blamed out of the retries of that call (``freyr_dspy.blame``).
    exclude_blamed: bool = False
    #: Offer a blamed argument the values its error lists, as an enum (``freyr_dspy.blame``).
    choose_listed: bool = False
    #: Stop once the calls are made: no summary call (the caller reads ``result.calls``).
    calls_only: bool = False
    #: Let the parameters role write several calls of any planned tool, not only of one the
    #: plan repeats (``fill_several``), up to ``SPLIT_MOST``.
    split_calls: bool = False
    #: Do not make a call whose required text values share no word with the request
    #: (``freyr_dspy.grounding.unstated_required``).
    require_stated: bool = False

    @property
    def max_retries(self) -> int:
        """How many times a failed tool call is retried with the error as feedback."""
        return self.program.max_retries

    def state_text(self) -> str:
        """The current state as the roles see it."""
        return self.render_state(self.state)

    def call_role(self, role: str, **inputs: Any) -> dspy.Prediction:
        """Call one role's module, recording its LM calls, tokens and seconds.

        Raises:
            ModelFailure: when the role's model fails (transport, timeout, provider error).
            ConfigError: when the role has no model assigned.
            FakeLMError: when a strict test fake was called with an unscripted prompt.
        """
        module = self.program.role(role)
        if dspy.settings.lm is None and not has_lm(module):
            raise ConfigError(
                f"role {role!r} has no model; pass --model {role}=ID or call apply_assignment()"
            )
        started = time.perf_counter()
        prediction = None
        try:
            with dspy.track_usage() as tracker:
                prediction = module(**inputs)
        except (LMError, BackendError, TimeoutError, ConnectionError) as exc:
            if isinstance(exc.__cause__, FakeLMError):
                raise exc.__cause__ from None  # an unscripted fake call is a test bug
            detail = f"{role} model failed: {_one_line(exc)}"
            kind: FailureKind = "context" if _overflowed_context(exc) else "model"
            raise ModelFailure(Failure(kind=kind, detail=detail)) from exc
        finally:
            parse_failed = prediction is not None and prediction.get("parsed_ok") is False
            self._account(role, tracker.usage_data, time.perf_counter() - started, parse_failed)
        return prediction

    def _account(
        self, role: str, usage_data: dict[str, list[dict]], seconds: float, parse_failed: bool
    ) -> None:
        entries = [entry for per_lm in usage_data.values() for entry in per_lm]
        spent = RoleUsage(
            lm_calls=len(entries),
            input_tokens=sum(int(e.get("prompt_tokens") or 0) for e in entries),
            cached_input_tokens=sum(_cached_tokens(e) for e in entries),
            output_tokens=sum(int(e.get("completion_tokens") or 0) for e in entries),
            seconds=seconds,
            parse_failures=int(parse_failed),
        )
        self.add_usage(role, spent)

    def add_usage(self, role: str, spent: RoleUsage) -> None:
        """Count ``spent`` to ``role`` (model work done outside ``call_role``, such as scoring)."""
        self.usage[role] = self.usage.get(role, RoleUsage()) + spent

    def grounded(
        self, tool_name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], list[str]]:
        """The model's arguments without optional values nobody stated, and the names dropped.

        Evidence is what the user and the tools have said: the message, the conversation, the
        state and the outcomes so far (``freyr_dspy.grounding``). Off with
        ``FreyrProgram(ground_arguments=False)``; an unknown tool is left to validation.
        """
        tool = self.toolbox.resolve(tool_name)
        if tool is None or not self.program.ground_arguments:
            return dict(arguments), []
        return ground_arguments(tool, arguments, self.evidence())

    def evidence(self) -> Evidence:
        """What the user and the tools have said so far, for grounding argument values."""
        outcomes = self.render_outcomes() if self.calls else ""
        return Evidence.of(self.message, self.conversation, self.state_text(), outcomes)

    def execute(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        """Execute one call; commit the new state only when it succeeds.

        A value copied from the tool's description example (``copied_example_refusal``) is
        refused once, without running the tool, and the refusal is the call's error.
        """
        refusal = self.copied_example_refusal(tool, arguments)
        if refusal is not None:
            return Outcome(ok=False, message=refusal)
        return self.run_tool(tool, arguments)

    def run_tool(self, tool: str, arguments: dict[str, Any]) -> Outcome:
        """Execute one call already checked for copied examples; commit the state on success."""
        execution = self.toolbox.execute(tool, arguments, self.state)
        if execution.outcome.ok:
            self.state = execution.state
        return execution.outcome

    def copied_example_refusal(self, tool_name: str, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` are refused: a value is the description's example, never stated.

        Small models copy "e.g. 'Weekly sync'" into the title instead of the user's words. The
        copy goes back as an error so the model writes the value again; the same copy written
        a second time stands, as the user may have meant it. None when nothing was copied, for
        an unknown tool, and with ``ground_arguments=False``.
        """
        tool = self.toolbox.resolve(tool_name)
        if tool is None or not self.program.ground_arguments:
            return None
        examples = examples_of(tool)
        if not examples:  # most tools: no evidence to gather
            return None
        copies = [
            (name, value)
            for name, value in copied_examples(examples, arguments, self.evidence())
            if (tool.name, name, value) not in self.refused_copies
        ]
        if not copies:
            return None
        self.refused_copies.update((tool.name, name, value) for name, value in copies)
        # The values are not repeated: a small model copies from its feedback as well.
        names = ", ".join(dict.fromkeys(name for name, _ in copies))
        return (
            f"{names}: copied from the example in the description of {tool.name}, not a value "
            "the user gave; write the value the request gives"
        )

    def call_with_retries(
        self,
        tool_name: str,
        toolbox: Toolbox | None = None,
        *,
        first: dict[str, Any] | None = None,
    ) -> CallRecord:
        """FREYR's inner loop: parameters -> execute -> on error, feed it back and retry.

        The parameters role sees only this tool's spec, and its answer is typed by the tool's
        schema (``parameters_contract``). It gets ``1 + max_retries`` attempts, plus one for
        each value refused as a copy of the description's example (``copied_example_refusal``),
        after which the spec it sees has no examples left. After a failure it may give up
        instead (FREYR's ``OpError``): an operation that no arguments can make valid then costs
        no more attempts, and later calls still run.

        ``first``: the arguments of the first attempt, already written (one of several calls
        of the tool filled together, ``fill_several``); the role is asked only to retry.
        """
        box = toolbox or self.toolbox
        tool = box.get(tool_name)
        shown = tool  # the tool as the parameters role sees it
        parameter_names = {p.name for p in tool.parameters}
        feedback = "none"
        limits = RetryLimits(self.exclude_blamed, self.choose_listed)
        properties = parameters_contract(tool)["arguments"].get("properties", {})
        errors: list[str] = []
        arguments: dict[str, Any] = {}
        dropped: list[str] = []
        outcome = Outcome(ok=False, message="not attempted")
        gave_up = ran = False
        attempts_left = 1 + self.max_retries
        while attempts_left > 0:
            attempts_left -= 1
            if first is not None:
                arguments, dropped = self.grounded(tool.name, first)
                first = None
            elif tool.parameters:
                prediction = self.call_role(
                    "parameters",
                    contract=parameters_contract(
                        shown,
                        may_give_up=bool(errors),
                        forbidden=limits.forbidden,
                        choices=limits.choices,
                    ),
                    conversation=self.conversation,
                    message=self.message,
                    state=self.state_text(),
                    tool=render_tool_spec(shown),
                    feedback=feedback,
                )
                reason = gives_up(prediction.arguments, parameter_names) if errors else None
                if reason is not None:
                    message = f"not possible: {reason} (last error: {errors[-1]})"
                    outcome, gave_up = Outcome(ok=False, message=message), True
                    break
                arguments, dropped = self.grounded(tool.name, prediction.arguments)
            refusal = self.copied_example_refusal(tool.name, arguments)
            # After a tool error the model may rightly write a value the error listed.
            unstated = self.unstated(tool.name, arguments) if refusal is None and not ran else []
            if unstated:
                message = f"not made: the request gives no {', '.join(unstated)}"
                outcome, gave_up = Outcome(ok=False, message=message), True
                break
            if refusal is not None:  # asking again for the user's value costs no retry
                attempts_left += 1
                outcome = Outcome(ok=False, message=refusal)
                shown = tool_without_examples(tool)  # what it cannot see, it cannot copy again
            else:
                outcome, ran = self.run_tool(tool.name, arguments), True
            if outcome.ok:
                break
            errors.append(outcome.message)
            blamed = self.blamed_by(outcome.message, arguments) if refusal is None else {}
            limits.record(outcome.message, blamed, properties)
            kept = {name: value for name, value in arguments.items() if name not in blamed}
            shown_arguments = None if refusal is not None else kept
            note = blame_note(blamed, limits.choices)
            feedback = give_up_feedback(tool.name, shown_arguments, outcome.message, note)
        record = CallRecord(
            tool=tool.name,
            arguments=arguments,
            outcome=outcome,
            attempts=len(errors) + (1 if outcome.ok else 0),
            errors=errors,
            gave_up=gave_up,
            never_made=gave_up and not ran,
            dropped=dropped,
        )
        self.calls.append(record)
        return record

    def unstated(self, tool_name: str, arguments: dict[str, Any]) -> list[str]:
        """The required text arguments nobody stated, with ``require_stated`` (else none).

        Checked until the tool has run once (``call_with_retries``); a copy of a
        description's example is refused first, so the model writes the user's value.
        """
        tool = self.toolbox.resolve(tool_name)
        if not self.require_stated or tool is None:
            return []
        return unstated_required(tool, arguments, self.evidence())

    def blamed_by(self, error: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments ``error`` blames (none without ``exclude_blamed`` or ``choose_listed``).

        They are left out of the feedback; the next attempts' schema excludes their values
        (``exclude_blamed``) or offers the values the error lists (``choose_listed``).
        """
        watching = self.exclude_blamed or self.choose_listed
        return blamed_arguments(arguments, error) if watching else {}

    def call_until_exhausted(self, tool_names: list[str]) -> list[str]:
        """Call each tool in order with retries; stop at the first that exhausts them.

        FREYR stops there (LLMaker spec 4.2): later calls usually build on the failed one, and
        a small model that planned a dozen wrong names would otherwise spend its retries on
        every one of them. A call the model gave up on does not stop the rest.

        A tool planned several times ("the weather in Oslo and in Paris") has all its calls
        written at once, where its first entry stands (``fill_several``): asked for each
        entry alone, Qwen 1.5B wrote the same arguments every time. With ``split_calls``
        every planned tool is filled that way, for models that name a tool once whatever
        the message asks of it. Returns the names never attempted.
        """
        planned = Counter(tool_names)
        order = list(dict.fromkeys(tool_names))
        for index, name in enumerate(order):
            most = max(planned[name], SPLIT_MOST if self.split_calls else 1)
            several = self.fill_several(name, most) if most > 1 else [None]
            for first in several:
                if self.call_with_retries(name, first=first).exhausted:
                    return [n for n in tool_names if n in order[index + 1 :]]
        return []

    def fill_several(self, tool_name: str, most: int) -> list[dict[str, Any] | None]:
        """The arguments of each call of ``tool_name`` the message asks for (at most ``most``).

        One parameters call writes ``{"calls": [...]}``, an object per call, so every call
        is written knowing the others (``several_calls_contract``). Calls written twice count
        once. A backend that does not hold the model to the contract may answer with one
        call's arguments: that call is made once, and an answer with no call leaves the
        first call to be asked for alone (``[None]``).
        """
        tool = self.toolbox.get(tool_name)
        if not tool.parameters:
            return [{}] * most
        prediction = self.call_role(
            "parameters",
            contract=several_calls_contract(tool, most),
            conversation=self.conversation,
            message=self.message,
            state=self.state_text(),
            tool=f"{render_tool_spec(tool)}\n\n{several_calls_note(tool.name, most)}",
            feedback="none",
        )
        written = prediction.arguments
        calls = written.get("calls") if set(written) == {"calls"} else [written]
        distinct: list[dict[str, Any] | None] = []
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call and call not in distinct:
                distinct.append(call)
        return distinct[:most] or [None]

    def result(self, reply: str, intents: list[str], failure: Failure | None = None) -> Result:
        """Package what this run produced."""
        return Result(
            reply=reply,
            strategy=self.program.strategy_name,
            intents=intents,
            calls=self.calls,
            state=self.state,
            usage=self.usage,
            failure=failure,
        )

    def render_outcomes(self) -> str:
        """The calls made and their outcomes, one per line, for the summary role."""
        if not self.calls:
            return "no tool was called"
        return "\n".join(
            f"- {c.tool}({_args_text(c.arguments)}): {c.outcome.render()}" for c in self.calls
        )


def unknown_tools_failure(who: str, unknown: list[str]) -> Failure | None:
    """The failure of a plan that named only tools the catalog lacks (None if it named none)."""
    if not unknown:
        return None
    return Failure(kind="unknown_tool", detail=f"{who} named no known tool: {', '.join(unknown)}")


def has_lm(module: dspy.Module) -> bool:
    """Tell whether some predictor of ``module`` has an LM.

    The usual ``predict`` is checked first: walking every predictor costs ~0.4 ms per call.
    """
    predict = getattr(module, "predict", None)
    if isinstance(predict, dspy.Predict) and predict.lm is not None:
        return True
    return any(p.lm is not None for p in module.predictors())


def _args_text(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


#: llama.cpp raises a bare ``ValueError`` with this text; litellm has its own exception type.
_LLAMA_CPP_OVERFLOW = re.compile(r"exceed context window")


def _overflowed_context(exc: BaseException) -> bool:
    """Tell whether ``exc`` (or an exception it was raised from) is a context-window overflow."""
    from litellm.exceptions import ContextWindowExceededError

    return any(
        isinstance(e, ContextWindowExceededError) or _LLAMA_CPP_OVERFLOW.search(str(e))
        for e in exception_chain(exc)
    )


def _cached_tokens(usage_entry: dict[str, Any]) -> int:
    """Prompt tokens a backend reused from its cache (OpenAI's ``prompt_tokens_details``)."""
    details = usage_entry.get("prompt_tokens_details") or {}
    return int(details.get("cached_tokens") or 0)
