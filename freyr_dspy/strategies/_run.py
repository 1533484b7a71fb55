"""One ``Run`` per program call: the request, its tools and settings, frozen.

What the call does is written in the run's ``Ledger`` (the plan, the calls made, the state
they left, the cost). Strategies call the roles they hold through the run
(``run.call(self.intent, ...)``), which accounts for each role's model calls, tokens and
seconds and turns a model's failure into ``ModelFailure``; tools run through the run's
``ToolExecutor`` (``run.tools(policy)``), which checks the arguments and commits state only
on success. How a planned tool becomes calls and how a failed call is retried is
``freyr_dspy.strategies.retry._loop``, under a ``CallPolicy``. How the run ends is its
``ending``: the one way to stop before the reply.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import dspy
from dspy.utils.exceptions import LMError

from freyr_dspy.errors import BackendError, ConfigError, FakeLMError, exception_chain, one_line
from freyr_dspy.prompting import Contract
from freyr_dspy.roles import Role
from freyr_dspy.schemas import (
    CallRecord,
    Failure,
    FailureKind,
    OpenAsk,
    Result,
    RoleUsage,
)
from freyr_dspy.strategies._executor import ToolExecutor
from freyr_dspy.strategies._grounding import Evidence
from freyr_dspy.strategies._ledger import Ledger
from freyr_dspy.tools import Toolbox

if TYPE_CHECKING:
    from freyr_dspy.strategies._policies import CallPolicy
    from freyr_dspy.tools import CatalogLevel

__all__ = ["CallOverrides", "Ending", "ModelFailure", "Run", "call_text", "lm_of"]

#: How a run ends. ``reply``: a chat reply, or a summary of the calls made. ``calls``: once
#: the calls are made, with no summary (a request that needs no tool still gets its chat
#: reply): the caller reads the calls, or runs them elsewhere. ``nothing``: no reply is
#: written at all, the calls (or the plan) are the result (NLT's ``respond=False``).
Ending = Literal["reply", "calls", "nothing"]


@dataclass(frozen=True)
class CallOverrides:
    """What one request lays over the roles' own settings, applied call by call.

    Nothing is written to a predictor: ``Run.call`` passes these as the call's ``config`` and
    ``contract`` (DSPy's per-call overrides), so requests running at once can share a program.

    Args:
        sampling: LM settings for every role's calls (``temperature``, ``top_p``, ``seed``).
        reply_tokens: the cap on the reply in words (the roles that write it only: the others
            write JSON sized by their own caps, and cutting it would break it, not shorten it).
        reply_schema: the JSON schema the reply in words must be a value of (``None``: text).
    """

    sampling: Mapping[str, Any] = field(default_factory=dict)
    reply_tokens: int | None = None
    reply_schema: Mapping[str, Any] | None = None

    def config(self, role: Role) -> dict[str, Any]:
        """The LM settings of ``role``'s calls under this request."""
        config = dict(self.sampling)
        if role.writes_reply and self.reply_tokens is not None:
            config["max_tokens"] = self.reply_tokens
        return config

    def contract(self, role: Role) -> Contract | None:
        """The output schemas ``role``'s calls are held to under this request, if any."""
        if role.writes_reply and self.reply_schema is not None:
            return {"reply": dict(self.reply_schema)}
        return None


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

    #: The registry name of the strategy the run is for (its result says it).
    strategy_name: str
    toolbox: Toolbox
    message: str
    conversation: str
    render_state: Callable[[Any], str]
    ledger: Ledger = field(default_factory=Ledger)
    #: How much of each tool the planning roles see.
    catalog_level: CatalogLevel = "brief"
    #: How the run ends (``Ending``).
    ending: Ending = "reply"
    #: Only evaluate the prompts (``FreyrProgram.warm``): every role call writes one token.
    warming: bool = False
    #: The request's own sampling and reply contract, applied to each role call.
    overrides: CallOverrides = field(default_factory=CallOverrides)

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
        inputs = self._overridden(module, inputs)
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

    def _overridden(self, module: Role, inputs: dict[str, Any]) -> dict[str, Any]:
        """``inputs`` with the request's overrides for ``module`` (warming: one token)."""
        config = {**self.overrides.config(module), **inputs.get("config", {})}
        if self.warming:
            config["max_tokens"] = 1
        if config:
            inputs = {**inputs, "config": config}
        contract = self.overrides.contract(module)
        if contract:
            inputs = {**inputs, "contract": {**contract, **(inputs.get("contract") or {})}}
        return inputs

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

    def tools(self, policy: CallPolicy) -> ToolExecutor:
        """The executor of this run's calls, grounding them as ``policy`` says."""
        return ToolExecutor(
            self.toolbox,
            self.ledger,
            self.evidence,
            grounding=policy.ground_arguments,
            message=self.message,
        )

    def evidence(self) -> Evidence:
        """What the user and the tools have said so far, for grounding argument values."""
        outcomes = self.render_outcomes() if self.calls else ""
        return Evidence.of(self.message, self.conversation, self.state_text(), outcomes)

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
            strategy=self.strategy_name,
            intents=intents,
            calls=self.calls,
            state=self.state,
            usage=self.usage,
            failure=failure,
            open_asks=self.open_asks,
            waiting=list(self.waiting),
            verdicts=list(self.ledger.verdicts),
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
