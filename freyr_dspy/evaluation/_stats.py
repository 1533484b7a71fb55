"""Statistics of an evaluation, as pure functions over plain numbers.

The paper protocol (FREYR, Table 2) reports each metric as a mean over independent runs with
a 95 % t-interval, and compares strategies with a paired Wilcoxon signed-rank test,
Bonferroni-corrected over the strategy pairs. NLT adds the variance across inputs; CallNavi
needs an edit distance between call sequences.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import stats as scipy_stats

__all__ = [
    "bonferroni",
    "levenshtein",
    "mean_ci",
    "ratio",
    "sign_test",
    "variance_across_inputs",
    "variance_across_runs",
    "wilcoxon_paired",
]


@dataclass(frozen=True)
class Interval:
    """A mean with the half-width of its confidence interval.

    ``half_width`` is None when it cannot be estimated (fewer than two values); ``n`` is the
    number of values (runs) behind the mean.
    """

    mean: float
    half_width: float | None
    n: int

    @property
    def low(self) -> float | None:
        """Lower bound of the interval, or None when the half-width is unknown."""
        return None if self.half_width is None else self.mean - self.half_width

    @property
    def high(self) -> float | None:
        """Upper bound of the interval, or None when the half-width is unknown."""
        return None if self.half_width is None else self.mean + self.half_width

    def to_json(self) -> dict[str, float | int | None]:
        """A JSON-ready dict with the bounds spelled out."""
        return {
            "mean": self.mean,
            "half_width": self.half_width,
            "low": self.low,
            "high": self.high,
            "n": self.n,
        }


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """Return the mean of ``values`` with a Student-t confidence interval.

    The t-distribution (not the normal) because runs are few (3-10): with n runs the
    half-width is ``t(1 - alpha/2, n - 1) * s / sqrt(n)`` with ``s`` the sample deviation.

    Args:
        values: one value per run.
        confidence: coverage of the interval (0.95 in the paper).

    Returns:
        The interval; ``mean`` is NaN for no values and ``half_width`` None below two values.
    """
    n = len(values)
    if n == 0:
        return Interval(math.nan, None, 0)
    mean = statistics.fmean(values)
    if n < 2:
        return Interval(mean, None, n)
    deviation = statistics.stdev(values)
    t = float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1))
    return Interval(mean, t * deviation / math.sqrt(n), n)


def wilcoxon_paired(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Return the two-sided p-value of a paired Wilcoxon signed-rank test of ``a`` vs ``b``.

    Pairs with a zero difference are dropped (Wilcoxon's own rule). When every difference is
    zero the two samples are indistinguishable and the p-value is 1.0 (scipy would divide by
    zero there).

    Args:
        a: one value per paired observation.
        b: the matching values of the other strategy, in the same order.

    Returns:
        The p-value, or None when there is no pair at all.

    Raises:
        ValueError: when the two samples have different lengths (they are not paired).
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    if not a:
        return None
    if all(x == y for x, y in zip(a, b, strict=True)):
        return 1.0
    with warnings.catch_warnings():
        # NOTE: scipy warns about ties/zeros and falls back to the normal approximation,
        # which is the documented behaviour we want.
        warnings.simplefilter("ignore")
        result = scipy_stats.wilcoxon(a, b, zero_method="wilcox", alternative="two-sided")
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p


def sign_test(wins: int, losses: int) -> float | None:
    """Return the two-sided exact sign-test p-value of ``wins`` against ``losses``.

    The test behind "won 10 steps, lost 1": under no difference, each step that the two
    contestants decide differently goes either way with probability 1/2. Ties are not counted.

    Returns:
        The p-value, or None when no step was decided differently.
    """
    if wins < 0 or losses < 0:
        raise ValueError(f"counts must be non-negative, got {wins} wins and {losses} losses")
    if wins + losses == 0:
        return None
    return float(scipy_stats.binomtest(wins, wins + losses, 0.5).pvalue)


def bonferroni(
    p_values: Sequence[float | None], comparisons: int | None = None
) -> list[float | None]:
    """Multiply each p-value by the number of comparisons, capped at 1.

    Args:
        p_values: raw p-values; None (no test possible) stays None.
        comparisons: the family size; defaults to the number of p-values given.

    Returns:
        The corrected p-values, in the same order.
    """
    m = len(p_values) if comparisons is None else comparisons
    return [None if p is None else min(1.0, p * max(m, 1)) for p in p_values]


def variance_across_inputs(values_by_input: Mapping[Any, Sequence[float]]) -> float:
    """Return the population variance, across inputs, of each input's mean over runs.

    This is how much the score depends on *which* input is asked (NLT's "variance"): an
    agent that is right on some inputs and always wrong on others scores high here.

    Args:
        values_by_input: input id -> its values (e.g. 0/1 success), one per run.

    Returns:
        The variance, or NaN when no input has a value.
    """
    means = [statistics.fmean(v) for v in values_by_input.values() if len(v) > 0]
    return statistics.pvariance(means) if means else math.nan


def variance_across_runs(values_by_input: Mapping[Any, Sequence[float]]) -> float:
    """Return the mean, over inputs, of each input's population variance across runs.

    This is how unstable repeated answers to the *same* input are (0 for a deterministic
    agent), the complement of ``variance_across_inputs``.

    Args:
        values_by_input: input id -> its values, one per run.

    Returns:
        The mean variance, or NaN when no input has a value.
    """
    variances = [statistics.pvariance(v) for v in values_by_input.values() if len(v) > 0]
    return statistics.fmean(variances) if variances else math.nan


def levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Return the edit distance (insertions, deletions, substitutions) between two sequences.

    Works on strings and on any sequence of hashable items, e.g. lists of API names.
    """
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b))


def ratio(numerator: float, denominator: float) -> float | None:
    """Return ``numerator / denominator``, or None when the denominator is zero or NaN."""
    if not denominator or math.isnan(denominator):
        return None
    return numerator / denominator
