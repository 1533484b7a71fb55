"""``FreyrProgram``: a domain, its toolbox and one strategy module, as a single DSPy module.

The strategy module (``self.strategy``) holds exactly the roles it calls as attributes named
like the role ids, and a wrapping strategy holds its inner one as a sub-module, so
``named_predictors()`` gives stable keys for compiled artifacts (``strategy.intent.predict``,
``strategy.inner.intent.predict``). ``forward`` returns a ``dspy.Prediction`` carrying the
typed ``Result`` (also available as ``prediction.result``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Literal, Protocol, TypeVar, cast

import dspy

from freyr_dspy.domains import PLAIN_DOMAIN_NAME, Domain, get_domain, plain_domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.program._assignment import main_model, resolve_label, role_assignment
from freyr_dspy.program._spec import ProgramSpec
from freyr_dspy.prompting import NO_CONVERSATION, make_adapter
from freyr_dspy.roles import Role
from freyr_dspy.schemas import Result, RoleModel, Sampling
from freyr_dspy.settings import DEFAULT_MODEL
from freyr_dspy.strategies import (
    Ending,
    Ledger,
    ModelFailure,
    Request,
    Run,
    StrategyModule,
    make_strategy,
    parse_label,
)
from freyr_dspy.tools import CatalogLevel, Toolbox

__all__ = ["AdapterName", "FreyrProgram", "ProgramMaker", "render_conversation", "to_prediction"]

logger = logging.getLogger(__name__)

#: The request ``FreyrProgram.warm`` runs the roles on (their answers are thrown away).
WARM_MESSAGE = "Hello"

AdapterName = Literal["lean", "json", "chat"]
OptionsT = TypeVar("OptionsT", contravariant=True)


class FreyrProgram(dspy.Module):
    """A tool-using program: a strategy module, a domain's tools and state.

    Args:
        domain: a ``Domain`` or a registered domain name; None with a ``toolbox`` makes a
            plain tool-use program (``freyr_dspy.domains._plain``: no state, no domain text).
        strategy: a strategy module (``Gated(inner=Nlt())``, ...) or a registered strategy
            name (``freyr``, ``nlt``, ``gated``, ...) for its default configuration, with any
            switches after ``+`` (``freyr+calibrate``, as a model preset names it).
        toolbox: tools to use instead of the domain's own (the only tools without a domain).
        max_retries: retries of a failed tool call with the error fed back (paper: 3); None
            keeps the strategy's call policy's (3 unless it was built with another).
        state_view: which of the domain's state renderings the roles see.
        catalog_level: how much of each tool the selection roles see.
        adapter: ``lean`` (a compact JSON prompt, static inputs first), ``json`` (DSPy's JSON
            prompt) - both structured output, a grammar on llama.cpp - or ``chat`` (DSPy's
            ``[[ ## field ## ]]`` format).
        ground_arguments: leave out optional arguments whose values the model invented - stated
            nowhere in the message, conversation, state or earlier outcomes
            (``freyr_dspy.strategies._grounding``); each call records what it dropped. None
            keeps the strategy's call policy's (on unless it was built without).

    ``max_retries`` and ``ground_arguments`` live in the strategy's call policy, where the
    calls are made; the program reads and sets them there.
    """

    def __init__(
        self,
        domain: Domain | str | None = None,
        *,
        strategy: StrategyModule | str = "freyr",
        toolbox: Toolbox | None = None,
        max_retries: int | None = None,
        state_view: str | None = None,
        catalog_level: CatalogLevel = "brief",
        adapter: AdapterName = "lean",
        ground_arguments: bool | None = None,
    ) -> None:
        super().__init__()
        self.domain = _domain(domain, toolbox)
        self.toolbox = toolbox or self.domain.make_toolbox()
        if isinstance(strategy, str):
            name, switches = parse_label(strategy)
            strategy = make_strategy(name, **switches)
        self.strategy = strategy
        if max_retries is not None:
            self.max_retries = max_retries
        if ground_arguments is not None:
            self.ground_arguments = ground_arguments
        self.state_view = state_view
        self.catalog_level: CatalogLevel = catalog_level
        self.adapter: AdapterName = adapter
        self.assignment: dict[str, RoleModel] = {}
        self.domain.renderer(state_view)  # fail early on an unknown view

    @classmethod
    def for_model(
        cls,
        model: str | None = None,
        *,
        toolbox: Toolbox | None = None,
        domain: Domain | str | None = None,
        strategy: str | None = None,
        models: Iterable[str] = (),
        sampling: Iterable[str] | Mapping[str, Any] | Sampling = (),
        api_base: str | None = None,
        max_retries: int | None = None,
        state_view: str | None = None,
        cache: bool = False,
        default_model: str = DEFAULT_MODEL,
        benchmark: ProgramMaker[OptionsT] | None = None,
        eval_options: OptionsT | None = None,
    ) -> FreyrProgram:
        """A program whose roles play ``model``, running the model's preset strategy.

        The one factory: the CLI's commands, ``freyr serve``, the benchmarks and scripts all
        build their programs here, so a model runs its preset wherever nobody names a
        strategy. ``FreyrProgram.for_model("embedded/qwen2.5-coder-0.5b", toolbox=box)`` is
        the program ``freyr run --model embedded/qwen2.5-coder-0.5b --tools ...`` runs: the
        0.5B's preset (``freyr strategies`` lists every model's), every role on the 0.5B.
        Its saved form is ``spec()``, read back by ``from_spec``.

        Args:
            model: the model every role plays (default: the last bare id of ``models``, else
                ``default_model``).
            toolbox: the tools; a plain tool-use program unless a ``domain`` is named.
            domain: a domain (its own tools unless ``toolbox`` is given, and its state).
            strategy: a strategy label (``freyr+asks``) taken as written; ``preset`` (with
                switches after it: ``preset+require_stated``); None: the model's preset.
            models: ``ROLE=ID`` (one role) or ``ID`` (every role) specs over ``model``.
            sampling: one ``Sampling`` for every role, ``[ROLE.]PARAM=VALUE`` specs, or the
                same as a mapping (``{"temperature": 0, "intent.max_tokens": 32}``).
            api_base: the server of remote models.
            max_retries: retries of a failed call with its error as feedback (default 3).
            state_view: which of the domain's state renderings the roles see.
            cache: whether the role models use DSPy's response cache.
            default_model: the model when neither ``model`` nor a bare spec names one (the
                CLI passes ``FREYR_MODEL``'s).
            benchmark: builds the program for the strategy first (its domain, tools and
                prompt variant), with ``eval_options``.
            eval_options: the benchmark's options.

        Raises:
            ConfigError: no tools and no domain, or a malformed spec or label.
            UnknownRoleError: a spec names a role the strategy does not have.
            UnknownModelError: a model id no backend understands.
        """
        if isinstance(sampling, Mapping):
            sampling = [f"{key}={value}" for key, value in sampling.items()]
        models = tuple(models)
        chosen = model or main_model(models, default_model)
        label = resolve_label(strategy, chosen)
        if benchmark is None:
            program = cls(
                domain,
                strategy=label,
                toolbox=toolbox,
                max_retries=max_retries,
                state_view=state_view,
            )
        else:
            name = domain.name if isinstance(domain, Domain) else domain
            spec = ProgramSpec(
                strategy=label, domain=name, max_retries=max_retries, state_view=state_view
            )
            program = cls.from_spec(
                spec, benchmark=benchmark, eval_options=eval_options, toolbox=toolbox
            )
        assignment = role_assignment(
            label,
            model=chosen,
            models=models,
            sampling=sampling,
            api_base=api_base,
            roles=program.role_names,
        )
        return program.apply_assignment(assignment, cache=cache)

    @classmethod
    def from_spec(
        cls,
        spec: ProgramSpec,
        *,
        benchmark: ProgramMaker[OptionsT] | None = None,
        eval_options: OptionsT | None = None,
        cache: bool = False,
        toolbox: Toolbox | None = None,
    ) -> FreyrProgram:
        """The program ``spec`` describes: a saved program read back (``spec()`` wrote it).

        Args:
            spec: what to build.
            benchmark: builds the program for the strategy first (domain, toolbox, prompt
                variant); without one, ``spec.domain`` names the domain.
            eval_options: the benchmark's options (data directory, ``extra``); required with
                a benchmark.
            cache: whether the role models use the DSPy cache.
            toolbox: the tools of a program without a benchmark (the only tools of a plain
                tool-use program, whose spec names the ``tools`` domain or none).

        Raises:
            ConfigError: a spec with neither benchmark nor domain nor toolbox, a plain
                tool-use spec without a toolbox, a domain the benchmark does not have, or a
                strategy setting (or ``+`` switch) the strategy does not take.
            UnknownRoleError: the assignment names a role the strategy does not have.
            UnknownModelError: for a model id no backend understands.
        """
        name, switches = parse_label(spec.strategy)
        spec = spec.model_copy(update={"strategy": name})
        program = _base_program(cls, spec, benchmark, eval_options, toolbox)
        options = spec.options
        if switches:  # laid over the settings the benchmark (or the spec) gave the strategy
            options = (program.strategy.config() if options is None else options) | switches
        if options is not None and program.strategy.config() != options:
            # NOTE: a strategy rebuilt here loses what the benchmark changed in its roles
            # (NLT's paper prompt); the benchmark's own settings make the same config and
            # are kept.
            program.use_strategy(make_strategy(name, **options))
        _apply_settings(program, spec)
        if spec.assignment:
            program.apply_assignment(spec.assignment, cache=cache)
        return program

    def spec(self) -> ProgramSpec:
        """This program's saved form: every field set, its assignment included."""
        return ProgramSpec(
            strategy=self.strategy_name,
            options=self.strategy.config(),
            domain=self.domain.name,
            max_retries=self.max_retries,
            state_view=self.state_view,
            catalog_level=self.catalog_level,
            adapter=self.adapter,
            ground_arguments=self.ground_arguments,
            assignment=dict(self.assignment),
        )

    @property
    def max_retries(self) -> int:
        """Retries of a failed tool call with its error as feedback (the call policy's)."""
        return self.strategy.calling.max_retries

    @max_retries.setter
    def max_retries(self, retries: int) -> None:
        self.strategy.calling = replace(self.strategy.calling, max_retries=int(retries))

    @property
    def ground_arguments(self) -> bool:
        """Whether invented optional values are left out and copied examples refused."""
        return self.strategy.calling.ground_arguments

    @ground_arguments.setter
    def ground_arguments(self, on: bool) -> None:
        self.strategy.calling = replace(self.strategy.calling, ground_arguments=bool(on))

    def use_strategy(self, strategy: StrategyModule) -> None:
        """Run ``strategy`` from now on, with this program's retries and grounding."""
        retries, grounding = self.max_retries, self.ground_arguments
        self.strategy = strategy
        self.max_retries, self.ground_arguments = retries, grounding

    @property
    def strategy_name(self) -> str:
        """The registry name of the program's strategy."""
        return self.strategy.name

    @property
    def role_names(self) -> tuple[str, ...]:
        """The roles this program's strategy uses, in the strategy's order."""
        return self.strategy.role_names

    def role(self, name: str) -> Role:
        """Return the module playing role ``name``.

        Raises:
            UnknownRoleError: when the strategy has no such role.
        """
        return self.strategy.role(name)

    def reset_copy(self) -> FreyrProgram:
        """Deep copy with every predictor reset (no demos, no LM).

        NOTE: ``Module.deepcopy`` rather than DSPy's ``copy.deepcopy``: LM engines hold locks
        and model handles. The optimizers (LabeledFewShot, BootstrapFewShot) call this.
        """
        new: FreyrProgram = self.deepcopy()
        for predictor in new.predictors():
            predictor.reset()
        return new

    def apply_assignment(
        self, assignment: Mapping[str, RoleModel], *, cache: bool = False
    ) -> FreyrProgram:
        """Give each role its model and sampling settings; roles not named keep theirs.

        Raises:
            UnknownRoleError: for a role this program does not have.
            UnknownModelError: for a model id no backend understands.
        """
        from freyr_dspy.backends import make_lm

        for role, spec in assignment.items():
            module = self.role(role)
            sampling = spec.sampling
            if sampling.max_tokens is None:
                sampling = sampling.model_copy(update={"max_tokens": module.default_max_tokens})
            module.set_lm(make_lm(spec.model, sampling, api_base=spec.api_base, cache=cache))
            self.assignment[role] = spec
        self._lend_models()
        return self

    def _lend_models(self) -> None:
        """Give a role with no model the model of the role the strategy lends it from.

        Done when models are assigned, never during a request: the ``confirm`` role of code
        that assigns only the older roles checks with the planner's model, and the assignment
        records it, so a program saved afterwards loads with the same one.
        """
        for borrower, lender in self.strategy.lent_models().items():
            module, source = self.role(borrower), self.role(lender)
            lm = next((p.lm for p in source.predictors() if p.lm is not None), None)
            if lm is None or any(p.lm is not None for p in module.predictors()):
                continue
            module.set_lm(lm)
            if lender in self.assignment:
                self.assignment[borrower] = self.assignment[lender]

    def forward(
        self,
        message: str,
        conversation: str | Sequence[Mapping[str, str]] = "",
        state: Any = None,
        toolbox: Toolbox | None = None,
        calls_only: bool = False,
    ) -> dspy.Prediction:
        """Handle one user message.

        Args:
            message: the user's latest message.
            conversation: earlier turns, as text or ``[{"role": ..., "content": ...}]``.
            state: the domain state (a model or its JSON); the domain's initial state if None.
            toolbox: the tools offered for this message instead of the program's own (a
                dataset row's own tools, the tools of a served request).
            calls_only: stop once the calls are made, without the model call that reports
                them (the reply is then empty); for callers that read ``calls`` themselves,
                or execute them elsewhere. A request that needs no tool still gets its reply.

        Returns:
            A ``dspy.Prediction`` with ``reply``, ``calls``, ``state``, ``usage``, ``intents``,
            ``failure`` and the typed ``result``.
        """
        ending: Ending = "calls" if calls_only else "reply"
        run = self.start_run(message, conversation, state, toolbox, ending=ending)
        return to_prediction(self.run_step(run, self.strategy.run))

    def answer(self, request: Request) -> Result:
        """Answer one ``Request`` in the mode it asks: calls for the caller to make, or a reply.

        The request's tools are specs: calls are recorded, not executed; the caller makes them
        and comes back with their results (``Request.answered``). ``freyr serve`` answers each
        HTTP request this way; the strategy decides how (``StrategyModule.answer``). The
        request's sampling and reply contract apply to its own role calls only: the program
        is not changed, so requests may share it.
        """

        def start(turns: tuple[Mapping[str, str], ...], toolbox: Toolbox, ending: Ending) -> Run:
            run = self.start_run(request.message, turns, toolbox=toolbox, ending=ending)
            return replace(run, overrides=request.overrides)

        with dspy.context(adapter=_make_adapter(self.adapter)):
            return self.strategy.answer(request, start)

    def start_run(
        self,
        message: str,
        conversation: str | Sequence[Mapping[str, str]] = "",
        state: Any = None,
        toolbox: Toolbox | None = None,
        *,
        ending: Ending = "reply",
    ) -> Run:
        """The context of one request (see ``forward``), for running steps of the strategy.

        ``forward`` runs the whole strategy in it; a server that has the client execute the
        calls runs single steps (the summary of results the client sent back, a chat reply).
        ``ending``: how the run ends (``Run.ending``; ``forward(calls_only=True)`` is
        ``"calls"``).
        """
        return Run(
            strategy_name=self.strategy_name,
            toolbox=toolbox if toolbox is not None else self.toolbox,
            message=message,
            conversation=render_conversation(conversation),
            ledger=Ledger(state=self.coerce_state(state)),
            render_state=self.domain.renderer(self.state_view),
            catalog_level=self.catalog_level,
            ending=ending,
        )

    def warm(self, toolbox: Toolbox | None = None, state: Any = None) -> int:
        """Evaluate the prompt parts every request to ``toolbox`` starts with, ahead of them.

        The strategy's roles are called on a placeholder request, one token each, and the
        answers thrown away; an in-process model's prefix cache keeps the prompts' shared
        beginnings (FREYR: the catalog, and each tool's spec for its parameters), so the
        requests that follow evaluate little more than their own message. An app that embeds
        the program calls it at start. What the program answers does not change.

        Args:
            toolbox: the tools to warm for; the program's own if None.
            state: the domain state the requests will start from (its initial state if None).

        Returns:
            The model calls made (0 when the strategy has nothing to warm).
        """
        run = replace(
            self.start_run(WARM_MESSAGE, "", state, toolbox, ending="calls"), warming=True
        )
        with dspy.context(adapter=_make_adapter(self.adapter)), _quiet_truncation():
            try:
                self.strategy.warm(run)
            except ModelFailure as exc:
                logger.warning("warming up: %s", exc)
        return sum(usage.lm_calls for usage in run.usage.values())

    def run_step(self, run: Run, step: Callable[[Run], Result]) -> Result:
        """Run ``step`` on ``run`` with the program's prompt format; a model failure stops it.

        The result then carries the failure and what the run had done so far.
        """
        with dspy.context(adapter=_make_adapter(self.adapter)):
            try:
                return step(run)
            except ModelFailure as exc:
                logger.warning("%s", exc)
                return run.result("", run.intents, failure=exc.failure)

    def data_names(self) -> list[str]:
        """The names this program reads from benchmark data, in a fixed order (its domain's).

        Saved artifacts hold them by position (``name_refs``) instead of copying them.
        """
        return list(self.domain.data_names())

    def coerce_state(self, state: Any) -> Any:
        """Return the domain state for ``state`` (initial state for None, parsed for JSON)."""
        if state is None:
            return self.domain.initial_state()
        if isinstance(state, dict | list):
            return self.domain.load_state(state)
        return state


@contextmanager
def _quiet_truncation() -> Iterator[None]:
    """Silence DSPy's "response was truncated" warning: warming cuts every answer on purpose."""
    dspy_lm = logging.getLogger("dspy.clients.lm")
    level = dspy_lm.level
    dspy_lm.setLevel(logging.ERROR)
    try:
        yield
    finally:
        dspy_lm.setLevel(level)


def to_prediction(result: Result) -> dspy.Prediction:
    """Wrap a ``Result`` so DSPy (Evaluate, optimizers, usage tracking) can handle it."""
    return dspy.Prediction(
        reply=result.reply,
        calls=result.calls,
        state=result.state,
        usage=result.usage,
        intents=result.intents,
        failure=result.failure,
        result=result,
    )


def render_conversation(conversation: str | Sequence[Mapping[str, str]]) -> str:
    """Render earlier turns as ``role: content`` lines (``NO_CONVERSATION`` when empty)."""
    if isinstance(conversation, str):
        return conversation.strip() or NO_CONVERSATION
    lines = [f"{turn.get('role', 'user')}: {turn.get('content', '')}" for turn in conversation]
    return "\n".join(lines) or NO_CONVERSATION


def _domain(domain: Domain | str | None, toolbox: Toolbox | None) -> Domain:
    if isinstance(domain, str):
        return get_domain(domain)
    if domain is not None:
        return domain
    if toolbox is None:
        raise ConfigError(
            "FreyrProgram needs tools: pass toolbox=Toolbox(...) (or a domain such as 'todo')"
        )
    return plain_domain(toolbox)


def _make_adapter(name: AdapterName) -> dspy.Adapter:
    return make_adapter(name)


class ProgramMaker(Protocol[OptionsT]):
    """What builds a spec's program first: a benchmark (``freyr_dspy.benchmark.Benchmark``).

    A seam rather than the ``Benchmark`` type: the benchmark contract returns programs, so the
    program package naming it would make the two import each other.
    """

    @property
    def name(self) -> str:
        """The benchmark's name (for error messages)."""
        ...

    def make_program(self, strategy: str, options: OptionsT) -> FreyrProgram:
        """Build a fresh (unassigned) program for a strategy."""
        ...


def _base_program(
    cls: type[FreyrProgram],
    spec: ProgramSpec,
    benchmark: ProgramMaker[OptionsT] | None,
    eval_options: OptionsT | None,
    toolbox: Toolbox | None,
) -> FreyrProgram:
    if benchmark is None:
        strategy = make_strategy(spec.strategy, **(spec.options or {}))
        if spec.domain not in (None, PLAIN_DOMAIN_NAME):
            return cls(spec.domain, strategy=strategy, toolbox=toolbox)
        if toolbox is None:
            raise ConfigError(
                "a program for your own tools needs them: pass toolbox=... "
                "(on the command line --tools FILE, --mcp or --tools-module)"
            )
        return cls(toolbox=toolbox, strategy=strategy)
    if eval_options is None:
        raise ConfigError(f"building a {benchmark.name} program needs its evaluation options")
    program = benchmark.make_program(spec.strategy, eval_options)
    if spec.domain is not None and program.domain.name != spec.domain:
        raise ConfigError(
            f"benchmark {benchmark.name} builds programs of domain {program.domain.name!r}, "
            f"not {spec.domain!r}"
        )
    return program


def _apply_settings(program: FreyrProgram, spec: ProgramSpec) -> None:
    if spec.max_retries is not None:
        program.max_retries = spec.max_retries
    if spec.state_view is not None:
        program.domain.renderer(spec.state_view)  # fail early on an unknown view
        program.state_view = spec.state_view
    if spec.catalog_level is not None:
        program.catalog_level = cast(CatalogLevel, spec.catalog_level)
    if spec.adapter is not None:
        program.adapter = cast(AdapterName, spec.adapter)
    if spec.ground_arguments is not None:
        program.ground_arguments = spec.ground_arguments
