"""One ``Run`` per program call: the request, its tools and settings, frozen.

What the call does is written in the run's ``Ledger`` (the plan, the calls made, the state
they left, the cost). Strategies call the roles they hold through the run
(``run.call(self.intent, ...)``), which accounts for each role's model calls, tokens and
seconds and turns a model's failure into ``ModelFailure``; tools are executed through it
(``execute``, ``run_tool``), so state is committed only on success, and a value copied from a
description's example is refused once. How a planned tool becomes calls and how a failed call
is retried is ``freyr_dspy.strategies.retry.loop``, under a ``CallPolicy``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import dspy
from dspy.utils.exceptions import LMError

from freyr_dspy.errors import BackendError, ConfigError, FakeLMError, exception_chain, one_line
from freyr_dspy.roles import Role
from freyr_dspy.schemas import (
    CallRecord,
    Failure,
    FailureKind,
    OpenAsk,
    Outcome,
    Result,
    RoleUsage,
)
from freyr_dspy.strategies.grounding import Evidence, copied_examples, examples_of, ground_arguments
from freyr_dspy.strategies.ledger import Ledger
from freyr_dspy.tools import Toolbox

if TYPE_CHECKING:
    from freyr_dspy.schemas import RoleModel
    from freyr_dspy.tools import CatalogLevel

__all__ = ["ModelFailure", "ProgramView", "Run", "call_text", "has_lm", "lm_of"]


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


class ModelFailure(Exception):
    """Internal signal: a role's model failed; the run stops and reports what it has."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


@dataclass(frozen=True)
class Run:
    """One program call: its inputs, frozen, and the ``Ledger`` of what it has done.

    A step that needs a narrower context (fewer tools) makes one with
    ``dataclasses.replace(run, toolbox=...)``; it shares this run's ledger.
    """

    program: ProgramView
    toolbox: Toolbox
    message: str
    conversation: str
    render_state: Callable[[Any], str]
    ledger: Ledger = field(default_factory=Ledger)
    #: Stop once the calls are made: no summary call (the caller reads ``result.calls``).
    calls_only: bool = False
    #: Only evaluate the prompts (``FreyrProgram.warm``): every role call writes one token.
    warming: bool = False

    # What the ledger holds, to read (writes go through ``run.ledger``'s methods).

    @property
    def state(self) -> Any:
        """The current state: the request's, then what the last successful call left."""
        return self.ledger.state

    @property
    def calls(self) -> list[CallRecord]:
        """The calls made so far."""
        return self.ledger.calls

    @property
    def usage(self) -> dict[str, RoleUsage]:
        """Each role's cost so far."""
        return self.ledger.usage

    @property
    def intents(self) -> list[str]:
        """The tools planned so far."""
        return self.ledger.intents

    @property
    def open_asks(self) -> list[OpenAsk]:
        """Asks no call is planned for."""
        return self.ledger.open_asks

    @property
    def waiting(self) -> list[str]:
        """Planned calls left for the next round."""
        return self.ledger.waiting

    @property
    def can_wait(self) -> bool:
        """Whether a planned call may wait for the next round."""
        return self.ledger.can_wait

    @property
    def max_retries(self) -> int:
        """How many times a failed tool call is retried with the error as feedback."""
        return self.program.max_retries

    def state_text(self) -> str:
        """The current state as the roles see it."""
        return self.render_state(self.state)

    def call(self, module: Role, **inputs: Any) -> dspy.Prediction:
        """Call a role the strategy holds, recording its LM calls, tokens and seconds.

        The strategy passes the module it owns (``run.call(self.intent, ...)``); its usage is
        accounted under the module's ``role_id``.

        Raises:
            ModelFailure: when the role's model fails (transport, timeout, provider error).
            ConfigError: when the role has no model assigned.
            FakeLMError: when a strict test fake was called with an unscripted prompt.
        """
        role = module.role_id
        if dspy.settings.lm is None and not has_lm(module):
            raise ConfigError(
                f"role {role!r} has no model; pass --model {role}=ID or call apply_assignment()"
            )
        if self.warming:
            inputs = {**inputs, "config": {"max_tokens": 1}}
        started = time.perf_counter()
        prediction = None
        try:
            with dspy.track_usage() as tracker:
                prediction = module(**inputs)
        except (LMError, BackendError, TimeoutError, ConnectionError) as exc:
            if isinstance(exc.__cause__, FakeLMError):
                raise exc.__cause__ from None  # an unscripted fake call is a test bug
            detail = f"{role} model failed: {one_line(exc)}"
            kind = _failure_kind(exc)
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
        self.ledger.add_usage(role, spent)

    def grounded(
        self, tool_name: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], list[str]]:
        """The model's arguments without optional values nobody stated, and the names dropped.

        Evidence is what the user and the tools have said: the message, the conversation, the
        state and the outcomes so far (``freyr_dspy.strategies.grounding``). Off with
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
            self.ledger.commit(execution.state)
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
            if (tool.name, name, value) not in self.ledger.refused_copies
        ]
        if not copies:
            return None
        self.ledger.refuse_copies((tool.name, name, value) for name, value in copies)
        # The values are not repeated: a small model copies from its feedback as well.
        names = ", ".join(dict.fromkeys(name for name, _ in copies))
        return (
            f"{names}: copied from the example in the description of {tool.name}, not a value "
            "the user gave; write the value the request gives"
        )

    def result(
        self,
        reply: str,
        intents: list[str],
        failure: Failure | None = None,
        *,
        unsupported: list[str] | None = None,
    ) -> Result:
        """Package what this run produced (``unsupported``: what a rewritten reply invented)."""
        return Result(
            reply=reply,
            strategy=self.program.strategy_name,
            intents=intents,
            calls=self.calls,
            state=self.state,
            usage=self.usage,
            failure=failure,
            open_asks=self.open_asks,
            waiting=list(self.waiting),
            unsupported=unsupported or [],
        )

    def render_outcomes(self) -> str:
        """The calls made and their outcomes, one per line, for the summary role."""
        if not self.calls:
            return "no tool was called"
        return "\n".join(f"- {call_text(c)}: {c.outcome.render()}" for c in self.calls)


def lm_of(module: dspy.Module) -> Any:
    """The LM a module's calls go to: its first predictor's that has one, else DSPy's own."""
    return next((p.lm for p in module.predictors() if p.lm is not None), None) or dspy.settings.lm


def has_lm(module: dspy.Module) -> bool:
    """Tell whether some predictor of ``module`` has an LM.

    The usual ``predict`` is checked first: walking every predictor costs ~0.4 ms per call.
    """
    predict = getattr(module, "predict", None)
    if isinstance(predict, dspy.Predict) and predict.lm is not None:
        return True
    return any(p.lm is not None for p in module.predictors())


def call_text(call: CallRecord) -> str:
    """``get_weather(city='Oslo', days=2)``: a call as the roles and replies show it."""
    return f"{call.tool}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"


#: llama.cpp raises a bare ``ValueError`` with this text; litellm has its own exception type.
_LLAMA_CPP_OVERFLOW = re.compile(r"exceed context window")


def _failure_kind(exc: BaseException) -> FailureKind:
    """What kind of model failure ``exc`` is: a prompt over the context, a timeout, or other."""
    if _overflowed_context(exc):
        return "context"
    if _timed_out(exc):
        return "timeout"
    return "model"


def _timed_out(exc: BaseException) -> bool:
    """Tell whether ``exc`` (or an exception it was raised from) is a model's time-out."""
    from litellm.exceptions import Timeout

    return any(isinstance(e, TimeoutError | Timeout) for e in exception_chain(exc))


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
