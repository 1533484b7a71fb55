"""Whether a compile ships what it found, or the baseline: the guard, and the evidence it reads.

Every candidate was scored on every training row as the artifact it would ship. The one with
the best score is the *candidate*; its own score is optimistic (it was picked because it
scored best on these rows), so the guard tests the choosing: the rows are dealt into folds
stratified by toolbox and kind, and for each fold the best candidate is picked on the other
folds' rows and its outcomes on this fold's rows are used (nested selection). Those outcomes
are compared with the baseline's row by row, and the candidate ships only when all of these
hold; otherwise the baseline - the preset a user already has - ships, and the report says
which check failed:

* **gain**: more rows won than lost, one-sided exact sign test p <= ``alpha``;
* **practical margin**: rows won minus rows lost >= ``min_net`` (a gain of one row is noise);
* **every kind**: no kind of request (the dataset's category) loses more than
  max(2 rows, 15 % of its rows) net - a gain on one-tool requests must not be paid for by the
  requests no tool fits;
* **most toolboxes**: the net is >= 0 in at least two thirds of the toolboxes with 5 rows or
  more - a gain that lives in one toolbox is that toolbox's.

Scores come from the rows' records, so the guard costs no model call.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from freyr_dspy.compiling._rows import TrainingRow
from freyr_dspy.errors import ConfigError

__all__ = [
    "ALPHA",
    "DEFAULT_FOLDS",
    "Choice",
    "Folds",
    "Scored",
    "Tally",
    "choose",
    "make_folds",
    "paired",
    "sign_test",
    "wilson_interval",
]

#: Significance of the guard's one-sided sign test. With ~100 rows and a third of them
#: differing, 0.05 needs a gain of ~+15 points; 0.1 with the three other checks beside it.
ALPHA = 0.1
#: Folds of the nested selection, by default.
DEFAULT_FOLDS = 5
#: A kind may lose at most max(this many rows, ``KIND_SHARE`` of its rows) net.
KIND_ROWS = 2
KIND_SHARE = 0.15
#: Toolboxes with fewer rows are not counted; of the others, this share must not lose.
TOOLBOX_ROWS = 5
TOOLBOX_SHARE = 2 / 3


@dataclass(frozen=True)
class Scored:
    """A candidate scored on every row: its trial number, per-row success and cost per row."""

    number: int
    rows: Mapping[str, float]
    tokens: float
    seconds: float

    @property
    def accuracy(self) -> float:
        """Mean success over the rows."""
        return sum(self.rows.values()) / max(len(self.rows), 1)


@dataclass(frozen=True)
class Folds:
    """Which fold each row is in, and the order rows are scored in."""

    fold_of: dict[str, int]
    order: tuple[str, ...]
    k: int

    def train_ids(self, fold: int) -> list[str]:
        """The rows of every other fold, in order."""
        return [row for row in self.order if self.fold_of[row] != fold]

    def rows_of(self, fold: int) -> list[str]:
        """The rows of one fold, in scoring order."""
        return [row for row in self.order if self.fold_of[row] == fold]


def make_folds(rows: Sequence[TrainingRow], k: int = DEFAULT_FOLDS, *, seed: int = 0) -> Folds:
    """Deal the rows into ``k`` folds by toolbox and kind, seeded; interleave them for scoring.

    Every prefix of the scoring order holds a share of each toolbox and kind, so the rows a
    candidate is first scored on (successive halving) are a fair sample of all of them.

    Raises:
        ConfigError: with fewer than two rows, or ``k`` below 2.
    """
    if len(rows) < 2:
        raise ConfigError(f"need at least 2 labelled rows to compile, got {len(rows)}")
    if k < 2:
        raise ConfigError(f"need at least 2 folds, got {k}")
    k = min(k, len(rows))
    rng = random.Random(seed)
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        cells[(row.toolbox, row.kind)].append(row.id)
    fold_of: dict[str, int] = {}
    rank: dict[str, float] = {}
    dealt = 0
    for cell in sorted(cells):
        ids = sorted(cells[cell])
        rng.shuffle(ids)
        for index, row_id in enumerate(ids):
            fold_of[row_id] = dealt % k
            rank[row_id] = (index + rng.random()) / len(ids)
            dealt += 1
    order = tuple(sorted(fold_of, key=lambda r: (rank[r], fold_of[r], r)))
    return Folds(fold_of=fold_of, order=order, k=k)


@dataclass(frozen=True)
class Tally:
    """Rows won and lost against the baseline."""

    wins: int = 0
    losses: int = 0
    rows: int = 0

    @property
    def net(self) -> int:
        """Rows won minus rows lost."""
        return self.wins - self.losses

    def lower_bound(self, z: float = 1.2816) -> float:
        """The one-sided 90 % lower bound of the paired gain, as a share of the rows.

        Each row's difference is +1, 0 or -1; the bound is the mean less ``z`` standard errors.
        """
        if self.rows == 0:
            return 0.0
        mean = self.net / self.rows
        variance = (self.wins + self.losses) / self.rows - mean * mean
        return mean - z * math.sqrt(max(variance, 0.0) / self.rows)

    def to_json(self) -> dict[str, int]:
        """``{"won": .., "lost": .., "rows": ..}``."""
        return {"won": self.wins, "lost": self.losses, "rows": self.rows}


def paired(
    outcomes: Mapping[str, float], base: Mapping[str, float], rows: Sequence[TrainingRow]
) -> tuple[Tally, dict[str, Tally], dict[str, Tally]]:
    """Wins and losses against ``base``: in all, per kind and per toolbox."""
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    boxes: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        won = outcomes[row.id] >= 1.0 > base[row.id]
        lost = base[row.id] >= 1.0 > outcomes[row.id]
        for counts in (kinds[row.kind], boxes[row.toolbox]):
            counts[0] += won
            counts[1] += lost
            counts[2] += 1
    total = Tally(
        sum(c[0] for c in kinds.values()),
        sum(c[1] for c in kinds.values()),
        sum(c[2] for c in kinds.values()),
    )
    return total, _tallies(kinds), _tallies(boxes)


def _tallies(counts: Mapping[str, list[int]]) -> dict[str, Tally]:
    return {name: Tally(*c) for name, c in sorted(counts.items())}


@dataclass(frozen=True)
class Choice:
    """What the guard decided, with the evidence."""

    #: The trial shipped: the candidate when it passed, else the baseline.
    shipped: int
    #: The trial with the best score on the rows.
    candidate: int
    baseline: int
    #: The nested choice against the baseline: in all, per kind, per toolbox.
    total: Tally
    kinds: dict[str, Tally]
    toolboxes: dict[str, Tally]
    p_value: float
    #: Mean success of the nested choice (an estimate of shipping what is chosen).
    nested_accuracy: float
    #: The checks that failed (empty when the candidate ships or is the baseline).
    failed: tuple[str, ...] = ()
    alpha: float = ALPHA
    min_net: int = 2
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def wins(self) -> int:
        """Rows the nested choice won against the baseline."""
        return self.total.wins

    @property
    def losses(self) -> int:
        """Rows the nested choice lost against the baseline."""
        return self.total.losses

    @property
    def passed(self) -> bool:
        """Whether the candidate is shipped."""
        return self.shipped == self.candidate and self.candidate != self.baseline

    def sentence(self) -> str:
        """The decision in one line."""
        test = f"won {self.wins}, lost {self.losses} (sign test p = {self.p_value:.3f})"
        if self.candidate == self.baseline:
            return "kept the baseline: no candidate scored above it"
        if self.passed:
            return f"chose trial {self.candidate}: against the baseline, held out, it {test}"
        return (
            f"kept the baseline: the best candidate (trial {self.candidate}), held out, {test}; "
            + "; ".join(self.failed)
        )

    def to_json(self) -> dict[str, object]:
        """The guard's evidence, JSON-ready."""
        return {
            "shipped": self.shipped,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "wins": self.wins,
            "losses": self.losses,
            "p_value": round(self.p_value, 4),
            "alpha": self.alpha,
            "min_net": self.min_net,
            "nested_accuracy": round(self.nested_accuracy, 4),
            "gain_lower_bound": round(self.total.lower_bound(), 4),
            "kinds": {k: t.to_json() for k, t in self.kinds.items()},
            "toolboxes": {k: t.to_json() for k, t in self.toolboxes.items()},
            "failed": list(self.failed),
        }


def choose(
    trials: Sequence[Scored],
    baseline: int,
    rows: Sequence[TrainingRow],
    folds: Folds,
    *,
    alpha: float = ALPHA,
) -> Choice:
    """Pick the candidate and run the guard (see the module docstring).

    Ties in score go to fewer tokens, then to the earlier trial (the baseline is the first).
    """
    by_number = {t.number: t for t in trials}
    candidate = _best(trials, list(folds.order))
    nested: dict[str, float] = {}
    for fold in range(folds.k):
        picked = _best(trials, folds.train_ids(fold))
        for row in folds.rows_of(fold):
            nested[row] = by_number[picked].rows[row]
    base = by_number[baseline].rows
    total, kinds, boxes = paired(nested, base, rows)
    p_value = sign_test(total.wins, total.losses)
    min_net = max(KIND_ROWS, math.ceil(0.03 * len(rows)))
    failed = (
        _failed_checks(total, kinds, boxes, p_value, alpha, min_net)
        if candidate != baseline
        else ()
    )
    return Choice(
        shipped=baseline if failed or candidate == baseline else candidate,
        candidate=candidate,
        baseline=baseline,
        total=total,
        kinds=kinds,
        toolboxes=boxes,
        p_value=p_value,
        nested_accuracy=sum(nested.values()) / max(len(nested), 1),
        failed=failed,
        alpha=alpha,
        min_net=min_net,
    )


def _failed_checks(
    total: Tally,
    kinds: Mapping[str, Tally],
    boxes: Mapping[str, Tally],
    p_value: float,
    alpha: float,
    min_net: int,
) -> tuple[str, ...]:
    failed = []
    if total.net <= 0 or p_value > alpha:
        failed.append(f"a gain needs p <= {alpha:g}")
    if total.net < min_net:
        failed.append(f"a gain needs {min_net} rows more won than lost, got {total.net}")
    for kind, tally in kinds.items():
        allowed = max(KIND_ROWS, math.floor(KIND_SHARE * tally.rows))
        if -tally.net > allowed:
            failed.append(f"{kind} lost {-tally.net} rows net (at most {allowed})")
    counted = [t for t in boxes.values() if t.rows >= TOOLBOX_ROWS]
    holding = sum(1 for t in counted if t.net >= 0)
    if counted and holding < TOOLBOX_SHARE * len(counted):
        failed.append(f"no loss in only {holding} of {len(counted)} toolboxes")
    return tuple(failed)


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
