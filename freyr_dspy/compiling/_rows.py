"""The rows a compile learns from, and each candidate scored on them as the artifact it ships.

A ``TrainingRow`` is one labelled request with what the guard counts by: its kind (the
dataset's category, or one read from its calls) and its toolbox. ``RowScorer.record`` runs
one row on a candidate's program - the very program that would ship: no fold programs, no
demos chosen again afterwards. A demo pool holds every training row, and a pool never shows
a request its own demos, so each row is scored as a new request would be by the shipped
artifact (leave-one-out).

Records are kept in a file cache keyed by everything that decides them (candidate, the row's
content, for a pool the training rows and the baseline's plans its ``false`` verdicts come
from, the program, models, freyr version and commit), so a resumed compile - or one on other
rows, another seed - pays only for rows it never scored.
While rows run, the in-process models replay calls already made
(``freyr_dspy.backends._replay``): a candidate that changes only the later steps of a request
pays only for those, and the seconds a replayed call first took are added back, so a
candidate's reported cost is what it would cost.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import dspy

from freyr_dspy.backends import ReplayMemo
from freyr_dspy.benchmark import Benchmark, Episode, gold_calls
from freyr_dspy.compiling._candidates import Candidate
from freyr_dspy.compiling._compiler import reattach_models
from freyr_dspy.compiling._metrics import BenchmarkMetric
from freyr_dspy.compiling._optimizers import OptimizerConfig
from freyr_dspy.compiling._pools import with_pool
from freyr_dspy.evaluation import StepRecord, run_episode
from freyr_dspy.program import FreyrProgram
from freyr_dspy.studies import EvaluationCache
from freyr_dspy.tools import toolbox_fingerprint

__all__ = ["ProgramMaker", "RowScorer", "TrainingRow", "planned_tools", "row_kind"]

#: Model failures a rerun may not meet again (a server that was down): never cached.
_TRANSIENT = frozenset({"model", "timeout"})

#: Builds a candidate's program without demos, with its models.
ProgramMaker = Callable[[Candidate], FreyrProgram]


@dataclass(frozen=True)
class TrainingRow:
    """A labelled row as the compile sees it: its id, kind, toolbox and gold tools."""

    id: str
    kind: str
    toolbox: str
    #: The gold calls' tools, with repeats; () when no tool fits.
    gold: tuple[str, ...]

    @classmethod
    def of(cls, episode: Episode) -> TrainingRow:
        """The row of a one-step episode."""
        step = episode.steps[0]
        calls = gold_calls(step) or []
        gold = tuple(call.tool for call in calls)
        kind = episode.case if episode.case not in ("", "dev") else row_kind(gold)
        return cls(id=episode.id, kind=kind, toolbox=episode.toolbox or "all", gold=gold)


def row_kind(gold: Sequence[str]) -> str:
    """A kind for a row without a category: no-call, one-call, same-tool or several."""
    if not gold:
        return "no-call"
    if len(gold) == 1:
        return "one-call"
    return "same-tool" if len(set(gold)) == 1 else "several"


def planned_tools(record: StepRecord) -> list[str]:
    """The tools the program planned before its check, from a row's record.

    The scored verdicts name every tool the plan had (kept or not); without them the plan as
    carried out is all there is.
    """
    verdicts = record.diagnostics.get("verdicts") or []
    if verdicts:
        return list(dict.fromkeys(str(v["tool"]) for v in verdicts))
    return [str(t) for t in record.diagnostics.get("plan") or []]


@dataclass
class RowScorer:
    """Candidates scored row by row as the artifacts they would ship (module docstring).

    Args:
        benchmark: scores each row.
        episodes: the rows (training and held-out), one-step episodes by id.
        examples: each training row's example (inputs and gold step), by id.
        make: builds a candidate's program without demos.
        optimizer: the demos' fixed knobs (seed, fields left out, cut).
        cache: stored records; ``context`` names what else decides them.
        memo: the replay memo attached to the program's models.
    """

    benchmark: Benchmark
    episodes: Mapping[str, Episode]
    examples: Mapping[str, dspy.Example]
    make: ProgramMaker
    optimizer: OptimizerConfig
    cache: EvaluationCache
    context: Mapping[str, object] = field(default_factory=dict)
    #: A hash of the training rows (a pool's demos come from them).
    data: str = ""
    memo: ReplayMemo = field(default_factory=ReplayMemo)
    #: The baseline's planned tools per training row (a pool's ``false`` confirm verdicts).
    plans: dict[str, list[str]] = field(default_factory=dict)
    _programs: dict[str, FreyrProgram] = field(default_factory=dict)

    def record(self, candidate: Candidate, row: str) -> StepRecord:
        """The row's record under ``candidate`` (from the cache when it was scored before)."""
        key = self._key(candidate, row)
        stored = self.cache.get(key)
        if stored is not None:
            return StepRecord.from_json(stored)
        record = self._run(self.program(candidate), row)
        failure = record.failure
        if failure is None or failure.kind not in _TRANSIENT:
            self.cache.put(key, record.to_json(), candidate=candidate.canonical(), row=row)
        return record

    def program(self, candidate: Candidate) -> FreyrProgram:
        """The program ``candidate`` ships: a pool holds every training row."""
        key = candidate.canonical()
        if key not in self._programs:
            program = self.make(candidate)
            if candidate.pool is not None:
                metric = BenchmarkMetric(self.benchmark, program.coerce_state)
                pooled = with_pool(
                    program,
                    list(self.examples.values()),
                    metric,
                    candidate.pool,
                    self.optimizer,
                    plans=self.plans,
                )
                reattach_models(program, pooled)
                program = pooled
            self._programs[key] = program
        return self._programs[key]

    def forget(self, candidate: Candidate) -> None:
        """Drop ``candidate``'s program (kept only while its rows are scored)."""
        self._programs.pop(candidate.canonical(), None)

    def _run(self, program: FreyrProgram, row: str) -> StepRecord:
        replayed = self.memo.replayed_seconds
        (record,) = run_episode(self.benchmark, program, self.episodes[row])
        saved = self.memo.replayed_seconds - replayed
        return replace(record, seconds=round(record.seconds + saved, 4))

    def _key(self, candidate: Candidate, row: str) -> str:
        """What decides a row's record: the candidate, the row's content, the code and models.

        A pool's demos come from the training rows (``data``) and the baseline's plans; a
        candidate without one is the same program whatever the training rows are, so its
        records serve every compile of those rows - another seed, another set of training
        rows, the held-out rows of another study.
        """
        pool = (
            {"data": self.data, "plans": _digest(self.plans)} if candidate.pool is not None else {}
        )
        return EvaluationCache.key(
            candidate=candidate.canonical(),
            row=_row_digest(self.episodes[row]),
            **pool,
            **self.context,
        )


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _row_digest(episode: Episode) -> str:
    """A row by its content (an id may be reused for another request)."""
    step = episode.steps[0]
    toolbox = toolbox_fingerprint(step.toolbox) if step.toolbox is not None else None
    return _digest(
        [episode.id, step.message, step.conversation, step.start_state, step.expected, toolbox]
    )


def kind_counts(rows: Sequence[TrainingRow]) -> Counter[str]:
    """How many rows of each kind."""
    return Counter(row.kind for row in rows)
