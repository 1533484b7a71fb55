"""What a compile reports: every candidate, the guard's decision, held-out scores, row records.

``CompileOutcome.lines()`` is what ``freyr compile`` prints: one line per candidate (its
stage, state, rows, score, rows won/lost against the baseline, tokens, seconds, and why it
was tried), the decision with the kinds and toolboxes it won and lost, the estimate on the
training rows beside the held-out score, and where the per-row records are. ``RecordLog``
writes those records - one JSON line per candidate and row, and per held-out row - so any
difference between the estimate and the held-out result can be traced to its rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freyr_dspy.compiling._candidates import Candidate
from freyr_dspy.compiling._guard import Choice, Tally, paired, wilson_interval
from freyr_dspy.compiling._rows import TrainingRow
from freyr_dspy.evaluation import StepRecord

if TYPE_CHECKING:
    from freyr_dspy.artifacts import ArtifactMeta
    from freyr_dspy.benchmark import Episode
    from freyr_dspy.compiling._trials import Scoring
    from freyr_dspy.program import FreyrProgram

__all__ = ["CompileOutcome", "HeldOut", "RecordLog", "TrialRow", "trial_row"]


@dataclass(frozen=True)
class TrialRow:
    """One candidate as the report shows it."""

    number: int
    stage: str
    state: str
    candidate: Candidate
    reason: str
    rows_scored: int
    accuracy: float
    interval: tuple[float, float]
    tokens: float
    seconds: float
    #: Against the baseline on the rows it was scored on: in all, and per kind.
    total: Tally
    kinds: dict[str, Tally]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "number": self.number,
            "stage": self.stage,
            "state": self.state,
            "reason": self.reason,
            "rows": self.rows_scored,
            "accuracy": round(self.accuracy, 4),
            "interval": [round(v, 4) for v in self.interval],
            "tokens": round(self.tokens, 1),
            "seconds": round(self.seconds, 3),
            "against_baseline": self.total.to_json(),
            "kinds": {k: t.to_json() for k, t in self.kinds.items()},
            "config": self.candidate.model_dump(mode="json"),
        }


def trial_row(scoring: Scoring, base: Scoring, rows: Sequence[TrainingRow]) -> TrialRow:
    """The report's view of a scored candidate."""
    scored = [row for row in rows if row.id in scoring.rows]
    total, kinds, _ = paired(scoring.rows, base.rows, scored)
    hits = sum(scoring.rows.values())
    return TrialRow(
        number=scoring.number,
        stage=scoring.stage,
        state=scoring.state,
        candidate=scoring.candidate,
        reason=scoring.reason,
        rows_scored=len(scoring.rows),
        accuracy=scoring.accuracy,
        interval=wilson_interval(hits, len(scoring.rows)),
        tokens=scoring.mean_tokens,
        seconds=scoring.mean_seconds,
        total=total,
        kinds=kinds,
    )


@dataclass(frozen=True)
class HeldOut:
    """Held-out rows scored by the baseline (before) and by what ships (after)."""

    rows: int
    before: float
    after: float
    total: Tally
    kinds: dict[str, Tally]
    tokens_before: float
    tokens_after: float
    seconds_before: float
    seconds_after: float

    @classmethod
    def of(
        cls,
        before: Mapping[str, StepRecord],
        after: Mapping[str, StepRecord],
        episodes: Mapping[str, Episode],
    ) -> HeldOut:
        """Compare the two sets of records, row by row."""
        rows = [replace(TrainingRow.of(episodes[row]), id=row) for row in before]
        total, kinds, _ = paired(
            {r: after[r].success for r in after}, {r: before[r].success for r in before}, rows
        )
        n = max(len(before), 1)
        return cls(
            rows=len(before),
            before=sum(r.success for r in before.values()) / n,
            after=sum(r.success for r in after.values()) / n,
            total=total,
            kinds=kinds,
            tokens_before=sum(r.input_tokens + r.output_tokens for r in before.values()) / n,
            tokens_after=sum(r.input_tokens + r.output_tokens for r in after.values()) / n,
            seconds_before=sum(r.seconds for r in before.values()) / n,
            seconds_after=sum(r.seconds for r in after.values()) / n,
        )

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "rows": self.rows,
            "before": round(self.before, 4),
            "after": round(self.after, 4),
            "against_baseline": self.total.to_json(),
            "kinds": {k: t.to_json() for k, t in self.kinds.items()},
            "tokens_before": round(self.tokens_before, 1),
            "tokens_after": round(self.tokens_after, 1),
            "seconds_before": round(self.seconds_before, 3),
            "seconds_after": round(self.seconds_after, 3),
        }


class RecordLog:
    """Every row's record of every candidate, one JSON line each (None: kept nowhere)."""

    def __init__(self, path: Path | None, *, shown: Path | None = None) -> None:
        self.path = path
        #: The path as reports name it (relative to the project where it is inside it).
        self.shown = shown or path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")

    def add(self, scoring: Scoring, row: TrainingRow, record: StepRecord) -> None:
        """One training row's record under one candidate."""
        self._write(
            {
                "trial": scoring.number,
                "stage": scoring.stage,
                "candidate": scoring.candidate.describe(),
                **_row_fields(row, record),
            }
        )

    def add_held_out(
        self, before: Mapping[str, StepRecord], after: Mapping[str, StepRecord]
    ) -> None:
        """The held-out rows' records, before and after."""
        for name, records in (("before", before), ("after", after)):
            for record in records.values():
                self._write({"held_out": name, **_row_fields(None, record)})

    def _write(self, entry: dict[str, Any]) -> None:
        if self.path is None:
            return
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry, default=str) + "\n")


def _row_fields(row: TrainingRow | None, record: StepRecord) -> dict[str, Any]:
    diagnostics = record.diagnostics
    return {
        "row": record.episode,
        "kind": row.kind if row else record.case,
        "toolbox": row.toolbox if row else None,
        "success": record.success,
        "failure_kind": record.failure_kind,
        "plan": diagnostics.get("plan"),
        "verdicts": diagnostics.get("verdicts"),
        "expected": diagnostics.get("expected"),
        "produced": diagnostics.get("produced"),
        "tokens": record.input_tokens + record.output_tokens,
        "seconds": record.seconds,
    }


@dataclass(frozen=True)
class CompileOutcome:
    """What a compile chose, why, the program to ship and its evidence."""

    program: FreyrProgram
    candidate: Candidate
    choice: Choice
    trials: tuple[TrialRow, ...]
    rows: tuple[TrainingRow, ...]
    folds: int
    study_name: str
    storage: str
    seconds: float
    minutes: float | None
    #: Proposals the budget left unscored.
    skipped: tuple[str, ...] = ()
    held_out: HeldOut | None = None
    records_path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: The artifact metadata to save ``program`` with (``freyr_dspy.save(program, path, meta)``).
    meta: ArtifactMeta | None = None

    @property
    def baseline(self) -> TrialRow:
        """The baseline's trial."""
        return next(t for t in self.trials if t.number == self.choice.baseline)

    @property
    def shipped(self) -> TrialRow:
        """The shipped candidate's trial."""
        return next(t for t in self.trials if t.number == self.choice.shipped)

    @property
    def n_rows(self) -> int:
        """Training rows."""
        return len(self.rows)

    def lines(self) -> list[str]:
        """The report (see the module docstring)."""
        budget = f" (budget {self.minutes:g} min)" if self.minutes is not None else ""
        lines = [
            f"{len(self.trials)} candidates on {self.n_rows} rows, "
            f"{self.seconds / 60:.1f} min{budget}; study {self.study_name}",
            f"{'trial':>5}  {'stage':<9} {'state':<8} {'rows':>4}  {'score (95% CI)':<19} "
            f"{'vs base':>8} {'tokens':>6} {'s/row':>6}  candidate",
        ]
        for t in self.trials:
            mark = "*" if t.number == self.choice.shipped else " "
            score = f"{t.accuracy:.3f} ({t.interval[0]:.2f}-{t.interval[1]:.2f})"
            versus = (
                "-" if t.number == self.choice.baseline else f"+{t.total.wins}/-{t.total.losses}"
            )
            lines.append(
                f"{t.number:>4}{mark}  {t.stage:<9} {t.state:<8} {t.rows_scored:>4}  {score:<19} "
                f"{versus:>8} {t.tokens:>6.0f} {t.seconds:>6.2f}  {t.candidate.describe()}"
            )
            if t.reason and t.number != self.choice.baseline:
                lines.append(f"{'':>7}why: {t.reason}")
        for skipped in self.skipped:
            lines.append(f"not scored: {skipped}")
        lines.append(self.choice.sentence())
        if self.choice.candidate != self.choice.baseline:
            lines.append("  by kind: " + _tallies(self.choice.kinds))
            lines.append("  by toolbox: " + _tallies(self.choice.toolboxes))
        shipped, base = self.shipped, self.baseline
        lines.append(
            f"training rows, as shipped: {base.accuracy:.3f} -> {shipped.accuracy:.3f}; the "
            f"choice held out by fold {self.choice.nested_accuracy:.3f} (gain's 90 % lower "
            f"bound {100 * self.choice.total.lower_bound():+.1f} points)"
        )
        if self.held_out is not None:
            held = self.held_out
            lines.append(
                f"held-out rows: {held.before:.3f} before (baseline) -> {held.after:.3f} after "
                f"({held.rows} rows; won {held.total.wins}, lost {held.total.losses})"
            )
        if self.records_path is not None:
            lines.append(f"row records: {self.records_path}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary (recorded in the artifact, printed with ``--json``)."""
        return {
            "study": self.study_name,
            "storage": self.storage,
            "rows": self.n_rows,
            "folds": self.folds,
            "seconds": round(self.seconds, 1),
            "budget_minutes": self.minutes,
            "baseline": self.choice.baseline,
            "candidate": self.choice.candidate,
            "shipped": self.choice.shipped,
            "shipped_config": self.candidate.model_dump(mode="json"),
            "decision": self.choice.sentence(),
            "guard": self.choice.to_json(),
            "trials": [t.to_json() for t in self.trials],
            "skipped": list(self.skipped),
            "records": str(self.records_path) if self.records_path else None,
            **({"held_out": self.held_out.to_json()} if self.held_out is not None else {}),
            **self.extra,
        }


def _tallies(tallies: Mapping[str, Tally]) -> str:
    return ", ".join(f"{name} +{t.wins}/-{t.losses}" for name, t in tallies.items())
