"""Margins fitted to a user's rows from the scored checks the baseline pass logged.

With ``scored_confirm`` a planned tool is kept when ``log P(true) - log P(false)`` reaches a
margin (``abstain_margin`` for a plan of one tool, ``confirm_margin`` for a plan of several).
The margins were set on our suite; a user's requests may ask for tools more or less often, so
the best margin for them differs. Every verdict the baseline made is logged with its margin,
so the outcome of another margin can be read off the log without asking the model:

* a tool kept either way: the row's outcome is the baseline's;
* a tool the new margin drops: the plan loses it; a plan left with no tool is right exactly
  when no tool fits the request;
* a tool the new margin keeps that the baseline dropped: wrong if the request does not ask for
  it; if it does, the call's arguments decide, which the log cannot tell, so such a row counts
  as the baseline's rate of right arguments on kept, wanted tools.

The margin with the best predicted score is chosen, and its gain is estimated leave-one-out
(each row predicted under the margin fitted on the other rows), so a margin that only fits
noise is not proposed. The compile then scores the proposal for real, as every candidate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from freyr_dspy.compiling._rows import TrainingRow
from freyr_dspy.evaluation import StepRecord
from freyr_dspy.strategies import CONFIRM_MARGIN

__all__ = ["FittedMargin", "fit_margin", "margin_rows"]

#: What a margin gets when a row's arguments cannot be predicted and nothing is known.
_UNKNOWN_ARGUMENTS = 0.5


@dataclass(frozen=True)
class MarginRow:
    """What one row's outcome depends on: its scored verdicts of one kind of plan."""

    id: str
    #: (tool, margin) of every verdict of the kind fitted, in order.
    verdicts: tuple[tuple[str, float], ...]
    #: The baseline's margin for these verdicts, its outcome, and the row's gold tools.
    success: float
    gold: tuple[str, ...]


@dataclass(frozen=True)
class FittedMargin:
    """A fitted margin, what it predicts on the rows, and its leave-one-out estimate."""

    setting: str
    value: float
    current: float
    rows: int
    predicted_gain: float
    loo_gain: float

    def reason(self) -> str:
        """Why it is proposed, for the report."""
        return (
            f"{self.setting} {self.current:g} -> {self.value:g} fitted on the scored checks of "
            f"{self.rows} rows: predicted +{self.predicted_gain:.1f} rows, "
            f"leave-one-out {self.loo_gain:+.1f}"
        )


def margin_rows(
    rows: Sequence[TrainingRow], records: dict[str, StepRecord], *, several: bool
) -> list[MarginRow]:
    """The rows whose scored verdicts judged plans of one tool (or of several)."""
    found = []
    for row in rows:
        verdicts = records[row.id].diagnostics.get("verdicts") or []
        mine = [v for v in verdicts if (v["plan_size"] > 1) == several]
        if mine:
            found.append(
                MarginRow(
                    id=row.id,
                    verdicts=tuple((str(v["tool"]), float(v["margin"])) for v in mine),
                    success=records[row.id].success,
                    gold=row.gold,
                )
            )
    return found


def fit_margin(
    setting: str, rows: Sequence[MarginRow], current: float | None
) -> FittedMargin | None:
    """The margin of ``rows`` with the best predicted score, if it predicts a real gain.

    ``current`` is the baseline's margin (None: ``CONFIRM_MARGIN``). None when no margin is
    predicted to win a row leave-one-out.
    """
    now = CONFIRM_MARGIN if current is None else current
    if len(rows) < 4:
        return None
    rate = _argument_rate(rows, now)
    predict = _predictor(now, rate)
    grid = _thresholds(rows, now)
    best = _best(grid, rows, predict, now)
    baseline = sum(row.success for row in rows)
    gain = sum(predict(row, best) for row in rows) - baseline
    loo = 0.0
    for index, row in enumerate(rows):
        others = [r for i, r in enumerate(rows) if i != index]
        fitted = _best(grid, others, predict, now)
        loo += predict(row, fitted) - row.success
    if best == now or gain < 1.0 or loo <= 0.0:
        return None
    return FittedMargin(
        setting=setting,
        value=round(best, 2),
        current=now,
        rows=len(rows),
        predicted_gain=gain,
        loo_gain=loo,
    )


Predictor = Callable[[MarginRow, float], float]


def _predictor(current: float, argument_rate: float) -> Predictor:
    """The predicted outcome of a row under a margin (see the module docstring)."""

    def predict(row: MarginRow, margin: float) -> float:
        before = {tool for tool, m in row.verdicts if m >= current}
        after = {tool for tool, m in row.verdicts if m >= margin}
        if before == after:
            return row.success
        wanted = set(row.gold)
        if not after:
            return 1.0 if not wanted else 0.0
        if not after <= wanted:
            return 0.0
        if after == wanted:
            return row.success if before == wanted else argument_rate
        return 0.0

    return predict


def _argument_rate(rows: Sequence[MarginRow], current: float) -> float:
    """How often the baseline got a row right when it kept exactly the wanted tools."""
    kept_right = [
        row.success
        for row in rows
        if row.gold and {t for t, m in row.verdicts if m >= current} == set(row.gold)
    ]
    return sum(kept_right) / len(kept_right) if kept_right else _UNKNOWN_ARGUMENTS


def _thresholds(rows: Sequence[MarginRow], current: float) -> list[float]:
    """The margins worth trying: the current one and one between each pair of logged margins."""
    margins = sorted({m for row in rows for _, m in row.verdicts})
    between = [(a + b) / 2 for a, b in itertools.pairwise(margins)]
    edges = [margins[0] - 0.5, margins[-1] + 0.5] if margins else []
    return sorted({current, *between, *edges})


def _best(
    grid: Sequence[float], rows: Sequence[MarginRow], predict: Predictor, current: float
) -> float:
    """The threshold with the best predicted score; ties go to the one nearest ``current``."""

    def key(margin: float) -> tuple[float, float]:
        return (-sum(predict(row, margin) for row in rows), abs(margin - current))

    return min(grid, key=key)
