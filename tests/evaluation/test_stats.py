"""The statistics helpers against hand computation."""

from __future__ import annotations

import math

import pytest

from freyr_dspy.evaluation._stats import (
    bonferroni,
    levenshtein,
    mean_ci,
    ratio,
    sign_test,
    variance_across_inputs,
    variance_across_runs,
    wilcoxon_paired,
)


def test_mean_ci_matches_hand_computed_t_interval() -> None:
    # mean 20, sample sd = sqrt(((10^2)+0+(10^2))/2) = 10, t(0.975, 2) = 4.302652729749464
    interval = mean_ci([10.0, 20.0, 30.0])
    assert interval.mean == pytest.approx(20.0)
    assert interval.half_width == pytest.approx(4.302652729749464 * 10 / math.sqrt(3))
    assert interval.low == pytest.approx(20 - interval.half_width)
    assert interval.n == 3


def test_mean_ci_other_confidence_and_degenerate_inputs() -> None:
    # t(0.95, 4) = 2.131846786326649 for a 90 % interval over 5 values
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert mean_ci(values, 0.90).half_width == pytest.approx(
        2.131846786326649 * math.sqrt(2.5) / math.sqrt(5)
    )
    assert mean_ci([7.0, 7.0]).half_width == 0.0
    single = mean_ci([4.0])
    assert (single.mean, single.half_width, single.low) == (4.0, None, None)
    assert math.isnan(mean_ci([]).mean) and mean_ci([]).n == 0


def test_wilcoxon_exact_p_values() -> None:
    # 5 positive differences, no ties: exact two-sided p = 2 / 2**5
    assert wilcoxon_paired([2, 3, 4, 5, 6], [1, 1, 1, 1, 1]) == pytest.approx(2 / 32)
    # zero differences are dropped: 3 non-zero pairs left, all positive: 2 / 2**3
    assert wilcoxon_paired([1, 1, 1, 0, 0], [0, 0, 0, 0, 0]) == pytest.approx(0.25)


def test_wilcoxon_all_zero_differences_and_errors() -> None:
    assert wilcoxon_paired([1.0, 0.0, 1.0], [1.0, 0.0, 1.0]) == 1.0
    assert wilcoxon_paired([], []) is None
    with pytest.raises(ValueError, match="differ in length"):
        wilcoxon_paired([1.0], [1.0, 2.0])


def test_sign_test_is_the_exact_binomial_p_value() -> None:
    # 10 won, 1 lost: P(X <= 1 or X >= 10), X ~ Bin(11, 1/2) = 2 * 12 / 2**11
    assert sign_test(10, 1) == pytest.approx(2 * 12 / 2**11)
    assert sign_test(3, 0) == pytest.approx(0.25)
    assert sign_test(4, 4) == pytest.approx(1.0)
    assert sign_test(0, 0) is None
    with pytest.raises(ValueError, match="non-negative"):
        sign_test(-1, 2)


def test_bonferroni_multiplies_and_caps() -> None:
    assert bonferroni([0.01, 0.2, None]) == [pytest.approx(0.03), pytest.approx(0.6), None]
    assert bonferroni([0.4, 0.01], comparisons=3) == [1.0, pytest.approx(0.03)]


def test_variances() -> None:
    by_input = {"a": [1.0, 1.0], "b": [0.0, 0.0], "c": [1.0, 0.0]}
    # input means 1, 0, 0.5 -> population variance 1/6
    assert variance_across_inputs(by_input) == pytest.approx(1 / 6)
    # within-input variances 0, 0, 0.25 -> mean 1/12
    assert variance_across_runs(by_input) == pytest.approx(1 / 12)
    assert math.isnan(variance_across_inputs({}))


def test_levenshtein_on_strings_and_lists() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein(["get_user", "pay"], ["get_user", "refund", "pay"]) == 1
    assert levenshtein(["a", "b"], ["b", "a"]) == 2


def test_ratio() -> None:
    assert ratio(1.0, 4.0) == 0.25
    assert ratio(1.0, 0.0) is None
    assert ratio(1.0, math.nan) is None
