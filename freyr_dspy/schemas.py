"""Pydantic I/O types shared by tools, roles, programs, compiling and artifacts."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BUDGETS",
    "MODEL_FAILURES",
    "OPTIMIZER_NAMES",
    "CallRecord",
    "Failure",
    "FailureKind",
    "OpenAsk",
    "OptimizerConfig",
    "OptimizerName",
    "Outcome",
    "Result",
    "RoleModel",
    "RoleUsage",
    "Sampling",
    "Verdict",
]


class Outcome(BaseModel):
    """What one tool execution produced: ok + message, or an error + message."""

    ok: bool
    message: str
    data: Any = None

    def render(self) -> str:
        """Render the outcome the way roles see it."""
        return self.message if self.ok else f"ERROR: {self.message}"


class CallRecord(BaseModel):
    """One tool the program decided to call, with its final arguments and outcome."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome
    attempts: int = 1
    errors: list[str] = Field(default_factory=list, description="feedback of failed attempts")
    gave_up: bool = Field(default=False, description="the model judged no arguments could work")
    never_made: bool = Field(
        default=False,
        description="given up before the tool ever ran: nothing happened a summary could report",
    )
    dropped: list[str] = Field(
        default_factory=list,
        description="optional arguments left out: the model wrote values nobody stated",
    )

    @property
    def exhausted(self) -> bool:
        """Failed after every attempt, as opposed to succeeding or being given up on."""
        return not self.outcome.ok and not self.gave_up


class RoleUsage(BaseModel):
    """Cost accounting of one role over one request."""

    lm_calls: int = 0
    input_tokens: int = 0
    #: Of ``input_tokens``, those the backend did not evaluate again (llama.cpp prefix cache).
    cached_input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    #: Answers the adapter could not parse, read by the role's tolerant parser instead.
    parse_failures: int = 0

    def __add__(self, other: RoleUsage) -> RoleUsage:
        return RoleUsage(
            lm_calls=self.lm_calls + other.lm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            seconds=self.seconds + other.seconds,
            parse_failures=self.parse_failures + other.parse_failures,
        )


FailureKind = Literal[
    "model",  # a role's model failed: transport, provider error
    "timeout",  # a role's model did not answer in time
    "context",  # a prompt did not fit the model's context window
    "parse",  # a selection answer could not be read at all
    "unknown_tool",  # the plan named only tools (or APIs) the catalog does not have
    "retries",  # a call failed on every attempt
    "gave_up",  # the model judged that no arguments could make a call valid
    "turn_limit",  # the prompted loop ended without a final answer
]
#: Failures where the model never answered: the request measures the backend, not the method.
MODEL_FAILURES: frozenset[str] = frozenset({"model", "timeout", "context"})


class Failure(BaseModel):
    """Why a request could not be completed: a kind to branch on, a detail to read."""

    model_config = ConfigDict(frozen=True)

    kind: FailureKind
    detail: str

    @property
    def model_failed(self) -> bool:
        """The model never answered (transport, timeout, context overflow)."""
        return self.kind in MODEL_FAILURES

    def __str__(self) -> str:
        return self.detail


class OpenAsk(BaseModel):
    """Something the user asked that no call carried out, and why; the reply names it."""

    model_config = ConfigDict(frozen=True)

    #: The words of the request that asked for it.
    ask: str
    #: Why it was not done: no offered tool does it, or the error of the call that failed.
    reason: str


class Verdict(BaseModel):
    """One scored check of a planned tool: how much likelier ``true`` was than ``false``.

    Logged so a compile can fit the margins to a user's rows without asking the model again.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    #: log P(true) - log P(false) for this tool, scored after the verdicts before it.
    margin: float
    #: Whether the tool was kept (the margin reached the threshold it was judged by).
    kept: bool
    #: How many different tools the checked plan named (1: a plan of one tool).
    plan_size: int


class Result(BaseModel):
    """Everything one program call produced.

    ``calls`` lists every tool call with its arguments, outcome and attempts; ``state`` is the
    domain state after the successful calls; ``usage`` maps role name to its cost.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    reply: str
    strategy: str
    intents: list[str] = Field(default_factory=list)
    calls: list[CallRecord] = Field(default_factory=list)
    state: Any = None
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
    failure: Failure | None = Field(
        default=None, description="why the request could not be completed"
    )
    open_asks: list[OpenAsk] = Field(
        default_factory=list, description="asks of the request that no call carried out"
    )
    waiting: list[str] = Field(
        default_factory=list,
        description="planned calls left for a next round: their values come from results "
        "not yet in (freyr serve sends the other calls first)",
    )
    verdicts: list[Verdict] = Field(
        default_factory=list,
        description="the scored checks of the planned tools (scored_confirm), in order",
    )
    unsupported: list[str] = Field(
        default_factory=list,
        description="results the summary role stated that no outcome or request gave; the "
        "reply was written from the outcomes instead",
    )

    @property
    def total_usage(self) -> RoleUsage:
        """Usage summed over all roles."""
        total = RoleUsage()
        for usage in self.usage.values():
            total = total + usage
        return total

    def to_json_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (state is dumped when it is a pydantic model)."""
        data = self.model_dump(mode="json", exclude={"state"})
        state = self.state
        data["state"] = state.model_dump(mode="json") if isinstance(state, BaseModel) else state
        data["total_usage"] = self.total_usage.model_dump()
        return data


class Sampling(BaseModel):
    """Sampling settings of one role's LM. ``None`` leaves the backend default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def as_kwargs(self) -> dict[str, float | int]:
        """Return the settings that are set, as LM keyword arguments."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class RoleModel(BaseModel):
    """Which model plays a role, with which sampling settings."""

    model_config = ConfigDict(frozen=True)

    model: str
    sampling: Sampling = Sampling()
    api_base: str | None = None


# NOTE: the compile recipe lives here, not in compiling/, because every artifact records it
# (artifacts/ sits below compiling/, which writes them); compiling.optimizers re-exports it.
OptimizerName = Literal[
    "labeled", "nearest", "misses", "bootstrap", "bootstrap_rs", "mipro", "gepa", "simba"
]
OPTIMIZER_NAMES: tuple[str, ...] = get_args(OptimizerName)

#: What ``budget`` means per optimizer, and its default (kept small: tiny models are slow).
BUDGETS: dict[str, tuple[str, int]] = {
    "labeled": ("unused", 0),
    "nearest": ("unused", 0),
    "misses": ("unused", 0),
    "bootstrap": ("unused", 0),
    "bootstrap_rs": ("candidate demo sets", 4),
    "mipro": ("trials", 6),
    "gepa": ("metric calls", 0),  # 0: enough to score the seed and try 12 rewrites
    "simba": ("steps", 2),
}


class OptimizerConfig(BaseModel):
    """How to compile: the optimizer and its knobs (recorded in every artifact).

    Args:
        name: which optimizer.
        max_demos: demos per role.
        budget: optimizer-specific effort (see ``BUDGETS``); None uses the default.
        teacher: model id of the bootstrap teacher (default: each role's own model).
        reflection: model id that writes instructions (MIPROv2's prompt model, GEPA's
            reflection model, SIMBA's rule writer); default: the teacher, else the student.
        seed: seed of every random choice the optimizers make.
        demo_field_maxlen: cut demo input fields longer than this many characters.
        num_threads: parallel program runs (keep 1 for in-process models).
        bsize: SIMBA's mini-batch size (lowered to the trainset size when larger).
        demo_roles: the roles that keep demos (None: every role). A tiny model copies
            demo values into other tools' arguments; ``("intent",)`` avoids that.
        demo_omit: input fields left out of every demo (e.g. ``("tools",)``: the catalog is
            in the real request anyway, so a demo need not repeat it, and an artifact then
            carries no tool descriptions).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: OptimizerName = "labeled"
    max_demos: int = Field(default=2, ge=0, le=16)
    budget: int | None = Field(default=None, ge=1)
    teacher: str | None = None
    reflection: str | None = None
    seed: int = 0
    demo_field_maxlen: int | None = Field(default=None, ge=20)
    num_threads: int = Field(default=1, ge=1)
    bsize: int = Field(default=4, ge=1)
    demo_roles: tuple[str, ...] | None = None
    demo_omit: tuple[str, ...] = ()

    @property
    def effective_budget(self) -> int:
        """The budget to use: the configured one, else the optimizer's default."""
        return self.budget if self.budget is not None else BUDGETS[self.name][1]
