"""The compile study: a baseline pass, then what pays, each scored as the artifact that ships.

1. **Baseline pass**: the uncompiled preset (what a user already has) on every training row,
   logging per row the plan, the scored checks' margins, the calls, the outcome, the kind of
   request and its toolbox. The only pass that always runs in full.
2. **Stages** (``_proposals``), cheapest first: margins fitted to the logged checks, switches
   the baseline's failures call for, a contrastive demo pool of the user's rows, other models.
   Each stage proposes neighbours of the best program so far; each is scored by successive
   halving - first on a third of the rows (an interleaved share of every toolbox and kind),
   and only the better half of those that lose nothing goes on to the rest - with calls it
   shares with earlier candidates replayed, so only what it changes costs model time. A
   candidate that wins more rows than it loses against the best so far becomes the best.
3. **Guard** (``_guard.choose``): the best program ships only when, chosen by nested
   selection, it beats the baseline by a practical margin without losing a kind of request
   or most toolboxes; otherwise the baseline ships and the report says which check failed.

Every candidate is the program that would ship: a demo pool holds all rows and is scored
leave-one-out, nothing is chosen again afterwards. The budget bounds the stages (the
baseline pass runs whatever it is); held-out ``--test`` rows are scored after it, before
(baseline) and after (shipped), and never used to choose.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from freyr_dspy.compiling._candidates import Candidate
from freyr_dspy.compiling._guard import Folds, Scored, choose
from freyr_dspy.compiling._outcome import CompileOutcome, HeldOut, RecordLog, trial_row
from freyr_dspy.compiling._proposals import (
    STAGES,
    Proposal,
    demo_proposals,
    margin_proposals,
    model_proposals,
    switch_proposals,
)
from freyr_dspy.compiling._rows import RowScorer, TrainingRow, planned_tools
from freyr_dspy.compiling._settings import CompileSettings
from freyr_dspy.compiling._trials import Scoring, TrialBook
from freyr_dspy.errors import ConfigError
from freyr_dspy.evaluation import StepRecord
from freyr_dspy.schemas import RoleModel

__all__ = ["Progress", "ProgressEvent", "compile_study"]

#: Share of the rows a candidate is scored on before halving decides whether it goes on.
FIRST_RUNG = 1 / 3


@dataclass(frozen=True)
class ProgressEvent:
    """Where a compile is: the candidate being scored and the work done and planned."""

    stage: str
    trial: int
    description: str
    #: Rows scored in all, and planned in all (the plan grows as stages propose).
    done: int
    planned: int
    #: The best score so far on all rows, and its trial (None before the baseline is done).
    best: float | None
    best_trial: int | None


Progress = Callable[[ProgressEvent], None]


@dataclass
class _Run:
    """One compile's moving parts (what the stages share)."""

    scorer: RowScorer
    rows: Sequence[TrainingRow]
    folds: Folds
    book: TrialBook
    settings: CompileSettings
    baseline_models: Mapping[str, RoleModel]
    progress: Progress | None
    log: RecordLog
    started: float = field(default_factory=time.perf_counter)
    done: int = 0
    planned: int = 0
    scored: list[Scoring] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    best: Scoring | None = None
    #: Wall seconds per row actually run (not cached), to tell what fits in the budget.
    row_wall: list[float] = field(default_factory=list)

    @property
    def order(self) -> tuple[str, ...]:
        return self.folds.order

    def records(self, scoring: Scoring) -> dict[str, StepRecord]:
        return {row: self.scorer.record(scoring.candidate, row) for row in scoring.rows}

    def tell(self, scoring: Scoring) -> None:
        if self.progress is None:
            return
        best = self.best
        self.progress(
            ProgressEvent(
                stage=scoring.stage,
                trial=scoring.number,
                description=scoring.candidate.describe(),
                done=self.done,
                planned=max(self.planned, self.done),
                best=None if best is None else best.accuracy,
                best_trial=None if best is None else best.number,
            )
        )

    def score(self, scoring: Scoring, rows: Sequence[str]) -> None:
        """Score ``rows`` of a candidate (cached rows cost nothing), telling progress.

        The rows run toolbox by toolbox: requests to one toolbox share their prompts' start
        (the catalog), which the in-process model then evaluates once, not once per row.
        """
        by_id = self.rows_by_id
        for row in sorted(rows, key=lambda r: by_id[r].toolbox):
            if row in scoring.rows:
                continue
            began = time.perf_counter()
            misses = self.scorer.cache.misses
            record = self.scorer.record(scoring.candidate, row)
            if self.scorer.cache.misses > misses:
                self.row_wall.append(time.perf_counter() - began)
            scoring.rows[row] = record.success
            scoring.tokens[row] = float(record.input_tokens + record.output_tokens)
            scoring.seconds[row] = record.seconds
            self.log.add(scoring, by_id[row], record)
            self.book.save_rows(scoring)
            self.done += 1
            self.tell(scoring)

    @functools.cached_property
    def rows_by_id(self) -> dict[str, TrainingRow]:
        return {row.id: row for row in self.rows}

    def seconds_left(self) -> float:
        if self.settings.minutes is None:
            return math.inf
        return self.settings.minutes * 60 - (time.perf_counter() - self.started)

    def fits(self, rows: int) -> bool:
        """Whether scoring ``rows`` more rows should end within the budget."""
        per_row = sum(self.row_wall) / len(self.row_wall) if self.row_wall else 0.0
        return rows * per_row <= self.seconds_left()


def compile_study(
    scorer: RowScorer,
    rows: Sequence[TrainingRow],
    folds: Folds,
    baseline: Candidate,
    *,
    book: TrialBook,
    settings: CompileSettings,
    roles: Sequence[str],
    baseline_models: Mapping[str, RoleModel],
    log: RecordLog,
    progress: Progress | None = None,
    test: Sequence[str] = (),
) -> CompileOutcome:
    """Run (or resume) a compile (see the module docstring) and build what ships.

    Args:
        scorer: scores candidates row by row, as shipped.
        rows: the training rows.
        folds: the nested selection's folds, and the rows' scoring order.
        baseline: the uncompiled preset.
        book: the study the trials are recorded in.
        settings: the budget, and what the stages may try.
        roles: the roles of the baseline program (where a pool may go).
        baseline_models: the baseline's role -> model.
        log: where every row's record is written.
        progress: told after every row.
        test: held-out row ids (in ``scorer.episodes``), scored before and after.

    Raises:
        ConfigError: when the baseline could not be scored on every row.
    """
    run = _Run(scorer, rows, folds, book, settings, baseline_models, progress, log)
    run.planned = len(run.order)
    base = _scored_in_full(run, Proposal(baseline, "baseline", "what you have uncompiled"))
    records = run.records(base)
    scorer.plans = {row.id: planned_tools(records[row.id]) for row in rows}
    run.best = base
    for stage in settings.stages:
        proposals = _proposals(stage, run.best, records, run, roles)
        if proposals:
            _run_stage(run, proposals)
    trials = [_as_scored(s) for s in run.scored if s.state == "COMPLETE"]
    choice = choose(trials, base.number, rows, folds, alpha=settings.alpha)
    shipped = next(s for s in run.scored if s.number == choice.shipped)
    program = scorer.program(shipped.candidate)
    held_out = _held_out(run, base, shipped, test) if test else None
    return CompileOutcome(
        program=program,
        candidate=shipped.candidate,
        choice=choice,
        trials=tuple(trial_row(s, base, rows) for s in run.scored),
        rows=tuple(rows),
        folds=folds.k,
        study_name=book.name,
        storage=book.storage,
        seconds=time.perf_counter() - run.started,
        minutes=settings.minutes,
        skipped=tuple(run.skipped),
        held_out=held_out,
        records_path=log.shown,
        extra={"replayed_calls": scorer.memo.hits, "model_calls": scorer.memo.misses},
    )


def _proposals(
    stage: str,
    best: Scoring,
    records: Mapping[str, StepRecord],
    run: _Run,
    roles: Sequence[str],
) -> list[Proposal]:
    settings = run.settings
    current = best.candidate
    if stage == "margins":
        return margin_proposals(current, run.rows, records)
    if stage == "switches":
        return switch_proposals(current, run.rows, records, settings.switches)
    if stage == "demos":
        allowed = roles if settings.demo_roles is None else settings.demo_roles
        return demo_proposals(current, run.rows, records, allowed, settings.max_demos)
    if stage == "models":
        return model_proposals(current, run.baseline_models, settings.candidates)
    raise ConfigError(f"unknown compile stage {stage!r}; expected any of {', '.join(STAGES)}")


def _scored_in_full(run: _Run, proposal: Proposal) -> Scoring:
    """A candidate scored on every row (the baseline: whatever the budget says)."""
    scoring = _open(run, proposal)
    if scoring.state == "RUNNING":
        run.score(scoring, run.order)
        run.book.finish(scoring)
    if set(scoring.rows) != set(run.order):
        raise ConfigError(f"the baseline (trial {scoring.number}) was not scored on every row")
    return scoring


def _open(run: _Run, proposal: Proposal) -> Scoring:
    """The candidate's finished trial from an earlier run, or a new one."""
    found = run.book.finished(proposal.candidate)
    scoring = found or run.book.start(proposal.candidate, proposal.stage, proposal.reason)
    scoring.stage, scoring.reason = proposal.stage, proposal.reason
    if found is not None:
        run.done += len(found.rows)
        for row in found.rows:
            run.log.add(found, run.rows_by_id[row], run.scorer.record(found.candidate, row))
    run.scored.append(scoring)
    run.tell(scoring)
    return scoring


def _run_stage(run: _Run, proposals: Sequence[Proposal]) -> None:
    """Successive halving over one stage's proposals; the winner becomes the best so far."""
    order = run.order
    first = order[: max(1, math.ceil(FIRST_RUNG * len(order)))]
    rest = order[len(first) :]
    run.planned += len(proposals) * len(first) + math.ceil(len(proposals) / 2) * len(rest)
    reference = run.best
    assert reference is not None
    started: list[Scoring] = []
    for proposal in proposals:
        if not run.fits(len(first)):
            run.skipped.append(f"{proposal.stage}: {proposal.candidate.describe()} (budget)")
            continue
        scoring = _open(run, proposal)
        if scoring.state == "RUNNING":
            run.score(scoring, first)
        started.append(scoring)
    ranked = sorted(started, key=lambda s: -_net(s, reference, first))
    going_on = [s for s in ranked[: math.ceil(len(ranked) / 2)] if _net(s, reference, first) >= 0]
    for scoring in started:
        if scoring.state != "RUNNING":
            continue
        if scoring not in going_on:
            run.book.finish(scoring, pruned=True)
            continue
        if not run.fits(len(rest)):
            run.skipped.append(f"{scoring.stage}: {scoring.candidate.describe()} (budget)")
            run.book.finish(scoring, pruned=True)
            continue
        run.score(scoring, rest)
        run.book.finish(scoring)
    finished = [s for s in started if s.state == "COMPLETE" and set(s.rows) == set(order)]
    winner = max(finished, key=lambda s: (_net(s, reference, order), -s.number), default=None)
    if winner is not None and _net(winner, reference, order) > 0:
        run.best = winner
    run.tell(run.best or reference)  # the stage's verdict: the best so far may have changed


def _net(scoring: Scoring, reference: Scoring, rows: Sequence[str]) -> int:
    """Rows ``scoring`` won minus rows it lost against ``reference``, on ``rows``."""
    won = sum(1 for r in rows if scoring.rows.get(r, 0.0) >= 1.0 > reference.rows[r])
    lost = sum(1 for r in rows if reference.rows[r] >= 1.0 > scoring.rows.get(r, 0.0))
    return won - lost


def _as_scored(scoring: Scoring) -> Scored:
    return Scored(
        number=scoring.number,
        rows=scoring.rows,
        tokens=scoring.mean_tokens,
        seconds=scoring.mean_seconds,
    )


def _held_out(run: _Run, base: Scoring, shipped: Scoring, test: Sequence[str]) -> HeldOut:
    """The held-out rows scored by the baseline and by what ships (the same when kept)."""
    same = shipped.candidate == base.candidate
    run.planned = run.done + len(test) * (1 if same else 2)
    before = _held_out_records(run, base, test)
    after = before if same else _held_out_records(run, shipped, test)
    run.log.add_held_out(before, after)
    return HeldOut.of(before, after, run.scorer.episodes)


def _held_out_records(run: _Run, scoring: Scoring, test: Sequence[str]) -> dict[str, StepRecord]:
    records = {}
    for row in sorted(test, key=lambda r: run.scorer.episodes[r].toolbox):
        records[row] = run.scorer.record(scoring.candidate, row)
        run.done += 1
        run.tell(replace(scoring, stage="held-out"))
    return records
