"""Benchmarks ``nlt-alex`` and ``nlt-sage``: exact-match tool selection (Johnson et al. 2025).

Each input is one episode of one step. A step succeeds when the set of tools the program
called is exactly the expected set: an extra tool or a missing one fails it. The tools are
parameterless and spec-only, so a call is only recorded; for ``native`` and ``prompted``
they are named ``check_<snake_name>`` (the paper's structured mode), for the others after
the topics. Options (``EvalOptions.extra``):

* ``prompt``: ``signature`` (default; our role instructions) or ``paper`` (the paper's own
  system prompt replaces the instructions of the selecting role: ``nlt`` for the NLT
  selector, ``structured`` for ``native`` and ``prompted``; freyr and gated have no paper
  prompt and keep theirs). The paper prompt repeats every tool description, so the NLT
  selector then gets the tool *names* only instead of a second copy.
* ``tools_file``: a JSON file of alternative tool descriptions (``{"tools": [{name,
  description}]}``), to measure robustness to rewording.
* ``inner``: the inner strategy of ``gated`` (default ``nlt``). NLT topics form a single
  library, so the gate has nothing to hide here; its savings are measured on CallNavi's
  catalogs of 81-96 APIs (``docs/results/gating.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import Episode, EvalOptions, Step, StepScore
from freyr_dspy.benchmarks.nlt._data import (
    Scenario,
    function_name,
    load_scenario,
    load_trainset,
    scenario_path,
    with_tool_descriptions,
)
from freyr_dspy.benchmarks.nlt._domain import Naming, make_domain
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import Result
from freyr_dspy.strategies import strategy_with
from freyr_dspy.tools import normalize_name

__all__ = ["NltBenchmark"]

PROMPT_CHOICES = ("signature", "paper")
_FUNCTION_NAMING = {"native", "prompted"}
_PAPER_PROMPT = {"nlt": "nlt", "native": "structured", "prompted": "structured"}


class NltBenchmark:
    """One NLT scenario as a benchmark."""

    strategies: tuple[str, ...] = ("nlt", "native", "prompted", "freyr", "gated")

    def __init__(self, scenario: str) -> None:
        self.scenario = scenario
        self.name = f"nlt-{scenario}"
        self.description = (
            f"NLT {scenario}: pick exactly the right topic tools for a chat "
            "message (exact match of the selected set)"
        )

    def load(self, options: EvalOptions) -> Scenario:
        """Load the scenario, with alternative tool descriptions when ``tools_file`` is set."""
        scenario = load_scenario(scenario_path(options.data_dir, self.scenario))
        tools_file = options.extra.get("tools_file")
        return with_tool_descriptions(scenario, Path(tools_file)) if tools_file else scenario

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """One single-step episode per input of the scenario file."""
        scenario = self.load(options)
        episodes = [
            _episode(str(item.id), item.message, item.expected_tools, "", scenario)
            for item in scenario.inputs
        ]
        return episodes[: options.limit] if options.limit else episodes

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """Build the program of ``strategy`` over this scenario's tools.

        Raises:
            ConfigError: for an unknown ``prompt`` option, or ``paper`` on a scenario file
                without that prompt.
        """
        scenario = self.load(options)
        prompt = str(options.extra.get("prompt") or "signature")
        if prompt not in PROMPT_CHOICES:
            raise ConfigError(f"unknown prompt {prompt!r}; expected one of {PROMPT_CHOICES}")
        naming: Naming = "function" if strategy in _FUNCTION_NAMING else "topic"
        paper = _PAPER_PROMPT.get(strategy) if prompt == "paper" else None
        # Only the selected calls are scored: no reply is written where a strategy can skip it.
        settings = {"respond": False, "inner": str(options.extra.get("inner") or "nlt")}
        program = FreyrProgram(
            make_domain(scenario, naming),
            strategy=strategy_with(strategy, settings),
            catalog_level="names" if paper == "nlt" else "brief",
        )
        if paper is not None:
            _use_paper_prompt(program, scenario, paper)
        return program

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Exact match of the set of tools called (successfully) with the expected set."""
        result: Result = prediction.result
        catalog = step.expected.get("catalog", [])
        called = {_topic(c.tool, catalog) for c in result.calls if c.outcome.ok}
        expected = set(step.expected.get("tools", []))
        extra, missing = sorted(called - expected), sorted(expected - called)
        success = not extra and not missing
        return StepScore(
            success=float(success),
            metrics={
                "exact": float(success),
                "extra": float(len(extra)),
                "missing": float(len(missing)),
            },
            failure_kind=None if success else _failure_kind(result),
            diagnostics={
                "expected": sorted(expected),
                "selected": sorted(called),
                "extra": extra,
                "missing": missing,
            },
        )

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """Read ``trainsets/nlt-<scenario>.jsonl``; tool names are checked against the catalog.

        Raises:
            DataError: with ``path:line`` for the first bad row.
        """
        scenario = self.load(options)
        rows = load_trainset(trainsets_dir / f"{self.name}.jsonl", scenario.tool_names)
        return [
            _episode(
                row.id, row.message, row.expected_tools, row.conversation, scenario, case="train"
            )
            for row in rows
        ]

    def summarize(self, records: Sequence[Any]) -> dict[str, Any]:
        """Accuracy, variance across inputs and runs, tokens in/out per request, per strategy.

        Also the input tokens of each strategy relative to ``native`` (the paper: NLT uses
        47.4 % fewer).
        """
        from freyr_dspy.benchmarks.nlt._summary import summarize_records

        return summarize_records(records)


def _episode(
    step_id: str,
    message: str,
    tools: list[str],
    conversation: str,
    scenario: Scenario,
    case: str | None = None,
) -> Episode:
    step = Step(
        id=step_id,
        message=message,
        conversation=conversation,
        expected={"tools": list(tools), "catalog": scenario.tool_names},
    )
    return Episode(id=step_id, case=case or scenario.scenario, steps=(step,))


def _topic(called: str, catalog: list[str]) -> str:
    """Map a called tool (topic or ``check_`` function name) back to its topic."""
    for topic in catalog:
        if normalize_name(called) in (normalize_name(topic), normalize_name(function_name(topic))):
            return topic
    return called


def _failure_kind(result: Result) -> str:
    failure = result.failure
    if failure is not None and failure.model_failed:
        return "model"
    if failure is not None and failure.kind in ("unknown_tool", "parse"):
        return "parse"
    return "selection"


def _use_paper_prompt(program: FreyrProgram, scenario: Scenario, prompt: str) -> None:
    """Replace the selecting role's instructions by the paper's system prompt."""
    if prompt not in scenario.prompts:
        raise ConfigError(
            f"scenario {scenario.scenario!r} has no {prompt!r} prompt; use --prompt signature"
        )
    text = scenario.prompts[prompt]
    for role in program.role_names:
        if role in {"parameters", "summary", "chat"}:
            continue
        predict = program.role(role).predict
        predict.signature = predict.signature.with_instructions(text)


def _register() -> None:
    from freyr_dspy.benchmark import register_benchmark

    for scenario in ("alex", "sage"):
        register_benchmark(NltBenchmark(scenario))


_register()
