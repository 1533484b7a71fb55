"""What a strategy is: a ``StrategyModule`` holding its roles, and the factories that build one.

A strategy is a DSPy module that holds exactly the roles it calls, as attributes named by the
role ids (``self.intent``, ``self.parameters``, ...); a strategy that wraps another holds it as
a sub-module (``Gated(inner=Nlt())``) and calls it (``inner.select``, ``inner.act``). Its
switches are small frozen policies (``freyr_dspy.strategies._policies``) taken by its
constructor (``Freyr(planning=..., calling=...)``); ``build_strategy`` packs a label's flat
settings into them, and ``config()`` gives them back flat, as JSON, so an artifact can rebuild
the same strategy. Each program call is one ``Run`` (``freyr_dspy.strategies._run``).
"""

from __future__ import annotations

import inspect
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Protocol

import dspy

from freyr_dspy.errors import UnknownRoleError
from freyr_dspy.roles import Role, role_class
from freyr_dspy.schemas import Result
from freyr_dspy.strategies._answering import answer_in_steps, answer_whole
from freyr_dspy.strategies._policies import CallPolicy, Policy, packed, policy_settings
from freyr_dspy.strategies._request import Request, RunStarter
from freyr_dspy.strategies._run import Run
from freyr_dspy.strategies._steps import Replies, Selection

__all__ = [
    "FunctionStrategy",
    "PlanningStrategy",
    "StrategyFactory",
    "StrategyModule",
    "accepted_config",
    "build_strategy",
    "setting_defaults",
    "setting_names",
]


class _StrategyMeta(type(dspy.Module), ABCMeta):  # type: ignore[misc]
    """DSPy's module metaclass, with abstract methods enforced (a strategy must ``run``)."""


class StrategyModule(dspy.Module, metaclass=_StrategyMeta):
    """A way of composing roles into one program call, as a DSPy module holding those roles.

    Subclasses set ``name`` and ``description``, create their roles in ``__init__`` (through
    ``super().__init__(roles)``) and implement ``run``. ``named_predictors()`` walks the roles
    and sub-strategies, so compiled demos and instructions are keyed by where they live.
    """

    #: The registry name.
    name: str = ""
    #: One line for listings.
    description: str = ""
    #: The policies the constructor takes, by argument name (``Freyr``: planning, calling).
    policies: ClassVar[Mapping[str, type[Policy]]] = {}
    #: How the strategy's calls are made, checked and retried (set by the constructor of a
    #: strategy that takes one; ``FreyrProgram`` sets its ``max_retries`` and grounding).
    calling: CallPolicy = CallPolicy()
    #: Whether the strategy writes a reply (off: ``Nlt(respond=False)``, the calls are all).
    respond: bool = True

    def __init__(self, roles: tuple[str, ...] = ()) -> None:
        super().__init__()
        for role in roles:
            setattr(self, role, role_class(role)(role))

    def config(self) -> dict[str, Any]:
        """The flat settings that rebuild this strategy, as JSON (none by default).

        ``make_strategy(strategy.name, **strategy.config())`` builds the same strategy,
        without its demos.
        """
        return {}

    @property
    def rounds(self) -> int:
        """Planning rounds a request may take (``freyr+rounds=...``); the others plan once."""
        return 1

    def warm(self, run: Run) -> None:
        """Call the roles whose prompts every request to ``run.toolbox`` starts alike.

        ``FreyrProgram.warm`` runs it on a placeholder request with ``run.warming`` set (one
        token written per call), so a prefix cache holds those prompt parts before the first
        real request. Nothing by default: a strategy's first request warms its own prompts.
        """

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

    @abstractmethod
    def run(self, run: Run) -> Result:
        """Handle one request and return its result."""

    def ending(self, run: Run) -> Run:
        """``run``, ending on nothing when the strategy writes no reply (``respond`` off)."""
        return run if self.respond else replace(run, ending="nothing")

    def answer(self, request: Request, start: RunStarter) -> Result:
        """Answer ``request`` in the mode it asks (``FreyrProgram.answer``).

        A strategy that only runs whole runs over the tools the request allows, its calls not
        already answered, and replies in words over the results when it calls nothing new
        (``freyr_dspy.strategies._answering.answer_whole``). ``start`` starts each run.
        """
        return answer_whole(self, request, start)

    def lent_models(self) -> dict[str, str]:
        """Role -> the role whose model it plays when it was assigned none of its own."""
        return {}


class PlanningStrategy(StrategyModule):
    """A strategy that plans before it calls: ``select``, then ``act``, replying with ``replies``.

    A wrapper (``gated``) runs its inner strategy's two steps apart, and a request is answered
    step by step: the results the caller sends back planned again, a tool forced, a reply in
    words by the strategy's own reply roles (``_answering.answer_in_steps``). Subclasses
    implement the three steps; ``run`` is them in order.
    """

    def run(self, run: Run) -> Result:
        """Plan, then make the calls and reply.

        FREYR's Algorithm 1; NLT's select, call, reply; the gate, then the inner strategy's
        selection among the gated tools and its calls.
        """
        return self.act(self.ending(run), self.select(run))

    def answer(self, request: Request, start: RunStarter) -> Result:
        """Answer ``request`` step by step (``_answering.answer_in_steps``)."""
        return answer_in_steps(self, request, start)

    @abstractmethod
    def select(
        self, run: Run, *, conversation: str | None = None, require_tool: bool = False
    ) -> Selection:
        """Plan the calls of one request.

        ``conversation`` replaces the run's earlier turns in the planning prompt;
        ``require_tool`` makes the plan name tools only.
        """

    @abstractmethod
    def act(self, run: Run, selection: Selection) -> Result:
        """Make the calls of ``selection``, then reply (as the run's ``ending`` says)."""

    @abstractmethod
    def replies(self) -> Replies:
        """The roles the strategy replies with (in words, and after calls)."""


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


def build_strategy(factory: StrategyFactory, settings: Mapping[str, Any]) -> StrategyModule:
    """The strategy ``factory`` builds from flat ``settings`` (a label's, an artifact's).

    The settings that are fields of one of its policies are packed into that policy
    (``freyr+abstain`` is ``Freyr(planning=PlanningPolicy(abstain=True))``); the others are
    constructor arguments as they are.
    """
    policies = _policies(factory)
    fields = {name for policy in policies.values() for name in policy_settings(policy)}
    arguments: dict[str, Any] = {k: v for k, v in settings.items() if k not in fields}
    for argument, policy in policies.items():
        arguments[argument] = packed(policy, settings)
    return factory(**arguments)


def setting_names(factory: StrategyFactory) -> list[str]:
    """The flat settings a strategy factory takes: its arguments, a policy's fields in its place."""
    return list(setting_defaults(factory, required=True))


def setting_defaults(factory: StrategyFactory, *, required: bool = False) -> dict[str, Any]:
    """Each flat setting of a strategy factory that has a default, with that default.

    ``required``: the settings without a default too (as ``inspect.Parameter.empty``).
    """
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    policies = _policies(factory)
    defaults: dict[str, Any] = {}
    for p in _constructor_parameters(factory):
        if p.name in policies:
            defaults |= policy_settings(policies[p.name])
        elif p.name != "self" and p.kind in kinds:
            if required or p.default is not inspect.Parameter.empty:
                defaults[p.name] = p.default
    return defaults


def _policies(factory: StrategyFactory) -> Mapping[str, type[Policy]]:
    return getattr(factory, "policies", None) or {}


def _constructor_parameters(factory: StrategyFactory) -> list[inspect.Parameter]:
    # NOTE: DSPy's module metaclass hides a class's own signature behind ``*args, **kwargs``.
    if isinstance(factory, type):
        target = next(vars(c)["__init__"] for c in factory.__mro__ if "__init__" in vars(c))
    else:
        target = factory
    return list(inspect.signature(target).parameters.values())


@dataclass(frozen=True)
class FunctionStrategy:
    """A strategy factory for a plain function ``fn(strategy, run) -> Result`` over fixed roles.

    For small strategies (benchmark probes, tests) that need no class of their own. ``fn``
    gets the module holding the roles, and calls them as its attributes
    (``run.call(strategy.chat, ...)``).
    """

    name: str
    roles: tuple[str, ...]
    fn: Callable[[StrategyModule, Run], Result]
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
        return self._fn(self, run)
