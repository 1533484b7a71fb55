"""The ``callnavi`` benchmark: one episode per question of the selected domains.

``EvalOptions.extra``: ``domains`` (list or comma string; default every domain found in the
data directory), ``difficulty`` (easy/medium/hard subset), ``catalog`` (the catalog detail
CallNavi's own strategies show first) and ``inner`` (``gated``'s inner strategy). ``limit``
applies **per domain** - comparing a 96-API catalog with a 21-API one needs both - and takes
questions round-robin over the difficulties in file order, so a short run still sees easy,
medium and hard questions.

A step's success is the AST exact match (original code); ``metrics`` carries every other
metric, strict variants included, and ``summarize`` reports per-difficulty and macro
averages, per-domain cost and, over several runs, election and Levenshtein stability.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from freyr_dspy.benchmark import (
    Episode,
    EvalOptions,
    Step,
    StepScore,
    register_benchmark,
)
from freyr_dspy.benchmarks.callnavi import _oracle  # noqa: F401 (registers gold answers)
from freyr_dspy.benchmarks.callnavi._data import (
    DIFFICULTIES,
    Question,
    available_domains,
    callnavi_dir,
)
from freyr_dspy.benchmarks.callnavi._data import load_domain as _load_domain
from freyr_dspy.benchmarks.callnavi._domain import CALLNAVI, CallNaviProgram, CallNaviState
from freyr_dspy.benchmarks.callnavi._quality import UNANSWERABLE, flags_by_question, quality_flags
from freyr_dspy.benchmarks.callnavi._scoring import score_prediction, summarize_records
from freyr_dspy.benchmarks.callnavi._trainset import load_trainset
from freyr_dspy.errors import ConfigError, did_you_mean
from freyr_dspy.program import FreyrProgram
from freyr_dspy.strategies import strategy_with

__all__ = ["CALLNAVI_BENCHMARK"]

TRAINSET_FILE = "callnavi.jsonl"


class CallNaviBenchmark:
    """API routing and call generation over the CallNavi domains."""

    name = "callnavi"
    description = "CallNavi: route to ordered API calls and fill their parameters ($$$ aware)"

    #: The CallNavi strategies, then the generic ones: ``native`` (the model's own function
    #: calling over the domain's APIs, the structured baseline) and ``freyr``, plus ``gated``
    #: where that strategy is installed. Generic strategies are scored on the calls they made.
    strategies: tuple[str, ...] = (
        "single",
        "two_step",
        "backward",
        *(("gated",) if importlib.util.find_spec("freyr_dspy.strategies._gated") else ()),
        "native",
        "freyr",
    )

    def episodes(self, options: EvalOptions) -> list[Episode]:
        """One single-step episode per selected question.

        Raises:
            ConfigError: for missing data, an unknown domain or difficulty.
        """
        folder = callnavi_dir(options.data_dir)
        difficulties = _selected(options.extra.get("difficulty"), DIFFICULTIES, "difficulty")
        episodes = []
        for domain in self.domains(options):
            data = _load_domain(folder, domain)
            flags = flags_by_question(quality_flags(data))
            chosen = [q for q in data.questions if q.difficulty in difficulties]
            for question in _limited(chosen, options.limit):
                episodes.append(_episode(question, folder, flags.get(question.id, [])))
        return episodes

    def domains(self, options: EvalOptions) -> list[str]:
        """The domains an evaluation covers (``extra["domains"]``, else all found).

        Raises:
            ConfigError: for a domain the data directory does not have.
        """
        found = available_domains(callnavi_dir(options.data_dir))
        return list(_selected(options.extra.get("domains"), tuple(found), "CallNavi domain"))

    def make_program(self, strategy: str, options: EvalOptions) -> FreyrProgram:
        """A fresh program whose catalog follows each question's domain.

        Tool calls are never executed here, so a failed spec validation is not retried
        (``max_retries=0``): generic strategies such as ``gated`` pay one parameters call
        per tool, like the CallNavi strategies.
        """
        settings = {
            key: options.extra[key] for key in ("catalog", "inner") if options.extra.get(key)
        }
        return CallNaviProgram(
            CALLNAVI,
            strategy=strategy_with(strategy, settings),
            max_retries=0,
            data_dir=callnavi_dir(options.data_dir),
        )

    def score(self, step: Step, before: Any, prediction: dspy.Prediction) -> StepScore:
        """Score the planned call list against the gold one (see ``scoring``)."""
        return score_prediction(step, before, prediction)

    def summarize(self, records: Sequence[Any]) -> dict[str, Any]:
        """Per-difficulty, macro, per-domain and stability figures per strategy."""
        return summarize_records(records)

    def train_episodes(self, trainsets_dir: Path, options: EvalOptions) -> list[Episode]:
        """Episodes from ``trainsets/callnavi.jsonl``; catalogs come from the data directory.

        Raises:
            DataError: ``path:line`` of a malformed row or an API its domain lacks.
            ConfigError: when the data directory is missing.
        """
        folder = callnavi_dir(options.data_dir)
        rows = load_trainset(trainsets_dir / TRAINSET_FILE, folder)
        wanted = set(self.domains(options)) if options.extra.get("domains") else None
        return [_episode(row, folder, []) for row in rows if wanted is None or row.domain in wanted]


def _episode(question: Question, folder: Path, flags: list[str]) -> Episode:
    state = CallNaviState(domain=question.domain, data_dir=str(folder))
    step = Step(
        id=question.id,
        message=question.text,
        start_state=state.model_dump(),
        expected={
            "gold": question.gold,
            "calls": gold_call_list(question.gold),
            "difficulty": question.difficulty,
            "domain": question.domain,
            "flags": flags,
            "unanswerable": bool(UNANSWERABLE & set(flags)),
        },
    )
    return Episode(id=question.id, case=question.domain, steps=(step,))


def gold_call_list(gold: dict[str, Any]) -> list[dict[str, Any]]:
    """The gold as ``[{"tool", "arguments"}]``, the form compile-time demos are built from."""
    params = gold.get("parameters")
    arguments = params if isinstance(params, list) else [params]
    return [
        {"tool": api, "arguments": arguments[i] if i < len(arguments) else {}}
        for i, api in enumerate(gold.get("API", []))
    ]


def _selected(value: Any, known: Sequence[str], kind: str) -> tuple[str, ...]:
    """Names from a list or a comma string, checked against ``known`` (default: all)."""
    if not value:
        return tuple(known)
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value)]
    for name in names:
        if name not in known:
            raise ConfigError(
                f"unknown {kind} {name!r}; expected one of {', '.join(known)}."
                + did_you_mean(name, known)
            )
    return tuple(dict.fromkeys(n for n in names if n))


def _limited(questions: list[Question], limit: int | None) -> list[Question]:
    """The first ``limit`` questions taken round-robin over difficulties, in file order."""
    if limit is None or limit >= len(questions):
        return questions
    queues = {d: [q for q in questions if q.difficulty == d] for d in DIFFICULTIES}
    chosen: list[Question] = []
    while len(chosen) < limit:
        for difficulty in DIFFICULTIES:
            if queues[difficulty] and len(chosen) < limit:
                chosen.append(queues[difficulty].pop(0))
    order = {q.id: i for i, q in enumerate(questions)}
    return sorted(chosen, key=lambda q: order[q.id])


CALLNAVI_BENCHMARK = CallNaviBenchmark()
register_benchmark(CALLNAVI_BENCHMARK)
