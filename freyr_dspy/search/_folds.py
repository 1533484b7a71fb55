"""Cross-validation folds over a compile's rows, and the order the rows are scored in.

With a hundred labelled rows, one dev split of thirty cannot tell configurations apart: a row
is a third of a point, and which thirty were drawn decides more than the configuration. So a
compile scores every row, each with the program whose demos were chosen from the other folds
(k-fold cross-validation): one pass over the rows per configuration, every row counted.

Folds are stratified by the rows' case (the dataset's category), and the rows are scored in
an interleaved order - every prefix holds a share of each category and each fold - so a trial
that the pruner stops after a few dozen rows was judged on a fair sample of all of them.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from freyr_dspy.benchmark import Episode
from freyr_dspy.errors import ConfigError

__all__ = ["DEFAULT_FOLDS", "Folds", "make_folds"]

#: Folds by default: each fold's demos come from 80 % of the rows.
DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class Folds:
    """Which fold each row is in, and the order rows are scored in."""

    fold_of: dict[str, int]
    order: tuple[str, ...]
    k: int

    def train_ids(self, fold: int) -> list[str]:
        """The rows a fold's demos may come from: every row of the other folds, in order."""
        return [row for row in self.order if self.fold_of[row] != fold]

    def rows_of(self, fold: int) -> list[str]:
        """The rows of one fold, in scoring order."""
        return [row for row in self.order if self.fold_of[row] == fold]

    def signature(self, fold: int) -> str:
        """A short hash of a fold's training rows (its demos depend on nothing else)."""
        text = "\n".join(sorted(self.train_ids(fold)))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def make_folds(episodes: Sequence[Episode], k: int = DEFAULT_FOLDS, *, seed: int = 0) -> Folds:
    """Deal the rows into ``k`` folds by case, seeded, and interleave them for scoring.

    ``k`` is capped at the number of rows. Rows are single-step episodes named by their ids.

    Raises:
        ConfigError: with fewer than two rows, or ``k`` below 2.
    """
    if len(episodes) < 2:
        raise ConfigError(f"need at least 2 labelled rows to cross-validate, got {len(episodes)}")
    if k < 2:
        raise ConfigError(f"need at least 2 folds, got {k}")
    k = min(k, len(episodes))
    rng = random.Random(seed)
    by_case: dict[str, list[str]] = {}
    for episode in episodes:
        by_case.setdefault(episode.case, []).append(episode.id)
    fold_of: dict[str, int] = {}
    rank: dict[str, float] = {}
    dealt = 0
    for case in sorted(by_case):
        rows = sorted(by_case[case])
        rng.shuffle(rows)
        for index, row in enumerate(rows):
            fold_of[row] = dealt % k
            rank[row] = (index + rng.random()) / len(rows)
            dealt += 1
    order = tuple(sorted(fold_of, key=lambda row: (rank[row], fold_of[row], row)))
    return Folds(fold_of=fold_of, order=order, k=k)
