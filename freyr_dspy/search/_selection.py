"""Which configuration a compile ships, and whether it beats the baseline by enough to ship.

The configuration with the best cross-validated score is the candidate. Its own score is an
optimistic estimate - it was picked *because* it scored best on these rows - so the guard
does not test it on them. It tests the choosing instead (nested cross-validation): for each
fold, the best configuration is picked on the *other* folds' rows and scored on this fold's;
the rows of all folds then give a paired comparison with the baseline that no row took part
in choosing. Only when that comparison wins by a margin the rows support (a one-sided exact
sign test over the rows where the two differ) is the candidate shipped; otherwise the
baseline - the preset a user already has - is, and the report says why.

Every trial the guard reads was scored on every row (a pruned trial is out of the race), and
scores come from the rows' records, so this costs no model call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from freyr_dspy.search._folds import Folds

__all__ = ["Choice", "Scored", "choose", "sign_test", "wilson_interval"]

#: Significance of the guard's one-sided sign test.
ALPHA = 0.05


@dataclass(frozen=True)
class Scored:
    """A trial scored on every row: its number, per-row success and cost per row."""

    number: int
    rows: Mapping[str, float]
    tokens: float
    seconds: float

    @property
    def accuracy(self) -> float:
        """Mean success over the rows."""
        return sum(self.rows.values()) / max(len(self.rows), 1)


@dataclass(frozen=True)
class Choice:
    """What the guard decided, with the evidence."""

    #: The trial shipped: the candidate when it passed, else the baseline.
    shipped: int
    #: The trial with the best cross-validated score.
    candidate: int
    baseline: int
    #: Rows where the nested choice succeeded and the baseline failed, and the reverse.
    wins: int
    losses: int
    p_value: float
    #: Mean success of the nested choice over the rows (an unbiased estimate of shipping it).
    nested_accuracy: float
    alpha: float = ALPHA

    @property
    def passed(self) -> bool:
        """Whether the candidate is shipped."""
        return self.shipped == self.candidate and self.candidate != self.baseline

    def sentence(self) -> str:
        """The decision in one line."""
        test = f"won {self.wins}, lost {self.losses} (sign test p = {self.p_value:.3f})"
        if self.candidate == self.baseline:
            return "kept the baseline: no configuration scored above it"
        if self.passed:
            return f"chose trial {self.candidate}: against the baseline, held out, it {test}"
        return (
            f"kept the baseline: the best configuration (trial {self.candidate}), held out, "
            f"{test}; a gain needs p <= {self.alpha:g}"
        )


def choose(
    trials: Sequence[Scored], baseline: int, folds: Folds, *, alpha: float = ALPHA
) -> Choice:
    """Pick the candidate and run the guard (see the module docstring).

    Ties in score go to fewer tokens, then to the earlier trial (the baseline is trial 0).
    """
    by_number = {t.number: t for t in trials}
    candidate = _best(trials, list(folds.order))
    nested: dict[str, float] = {}
    for fold in range(folds.k):
        others = folds.train_ids(fold)
        picked = _best(trials, others)
        for row in folds.rows_of(fold):
            nested[row] = by_number[picked].rows[row]
    base = by_number[baseline].rows
    wins = sum(1 for r, s in nested.items() if s >= 1.0 > base[r])
    losses = sum(1 for r, s in nested.items() if base[r] >= 1.0 > s)
    p_value = sign_test(wins, losses)
    passed = candidate != baseline and wins > losses and p_value <= alpha
    return Choice(
        shipped=candidate if passed else baseline,
        candidate=candidate,
        baseline=baseline,
        wins=wins,
        losses=losses,
        p_value=p_value,
        nested_accuracy=sum(nested.values()) / max(len(nested), 1),
        alpha=alpha,
    )


def _best(trials: Sequence[Scored], rows: Sequence[str]) -> int:
    def key(trial: Scored) -> tuple[float, float, int]:
        score = sum(trial.rows[r] for r in rows) / max(len(rows), 1)
        return (-score, trial.tokens, trial.number)

    return min(trials, key=key).number


def sign_test(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(at least ``wins`` of ``wins + losses`` fair coin flips)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a success rate (``successes`` of ``n``)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
