"""bench.results.stats pinned on known data."""

from __future__ import annotations

import math

import pytest

from bench.results import fmt, stats
from bench.results.compare import verdict

ONE_TO_TEN = [float(v) for v in range(1, 11)]


def test_summary_of_one_to_ten():
    summary = stats.summarize(ONE_TO_TEN)
    assert summary == stats.Summary(
        n=10,
        mean=5.5,
        stdev=pytest.approx(3.0276503540974917),
        minimum=1.0,
        maximum=10.0,
        median=5.5,
        p95=pytest.approx(9.55),
        p99=pytest.approx(9.91),
        q1=3.25,
        q3=7.75,
        ci_low=3.0,
        ci_high=8.0,
        warnings=("IQR is 82% of the median", "standard deviation is 55% of the mean"),
    )
    assert summary.iqr == 4.5
    assert summary.unstable


def test_non_finite_values_are_ignored():
    assert stats.summarize([1.0, math.nan, 3.0, math.inf]).n == 2
    empty = stats.summarize([])
    assert empty.n == 0 and math.isnan(empty.median) and empty.warnings == ("no values",)


def test_bootstrap_ci_is_seeded_and_brackets_the_median():
    values = [10.0 + (i % 7) * 0.3 for i in range(50)]
    first = stats.bootstrap_median_ci(values, seed=3)
    assert first == stats.bootstrap_median_ci(values, seed=3)
    assert first[0] <= stats.percentile(values, 50) <= first[1]
    # one value has no spread to resample: no interval rather than a zero-width one
    assert all(math.isnan(x) for x in stats.bootstrap_median_ci([4.0]))


def test_ratio_of_medians_and_its_interval():
    assert stats.ratio_of_medians([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]) == (2.0, 2.0, 2.0)
    ratio, low, high = stats.ratio_of_medians([v * 3 for v in ONE_TO_TEN], ONE_TO_TEN)
    assert ratio == 3.0
    assert low < 3.0 < high
    assert all(math.isnan(x) for x in stats.ratio_of_medians([], ONE_TO_TEN))


def test_a_stable_sample_raises_no_warning():
    assert stats.instability_warnings([10.0, 10.1, 9.9, 10.0, 10.05, 9.95]) == []
    assert not stats.summarize([10.0, 10.1, 9.9, 10.0, 10.05, 9.95]).unstable


def test_an_outlier_is_flagged():
    assert stats.instability_warnings([1.0] * 10 + [5.0]) == [
        "maximum is 5.0x the median",
        "standard deviation is 88% of the mean",
    ]


def test_too_few_values_is_a_warning_not_instability():
    summary = stats.summarize([1.0, 1.0])
    assert summary.warnings == ("only 2 values",)
    assert not summary.unstable


@pytest.mark.parametrize(
    ("ratio", "text"),
    [
        (1.31, "1.31× slower"),
        (0.8, "1.25× faster"),
        (1.0, "no change"),
        (1.004, "no change"),
        (0.0, "incomparable"),
        (math.nan, "incomparable"),
    ],
)
def test_format_change(ratio, text):
    assert fmt.change(ratio) == text


def test_compare_a_slower_sample():
    ref = [10 + 0.1 * i for i in range(20)]
    result = stats.compare_samples(ref, [v * 1.5 for v in ref])
    assert result.ratio == pytest.approx(1.5)
    assert result.pvalue < 1e-6
    assert verdict(result) == "1.50× slower (significant)"


def test_compare_identical_samples():
    ref = [10 + 0.1 * i for i in range(20)]
    result = stats.compare_samples(ref, list(reversed(ref)))
    assert (result.ratio, result.pvalue, result.significant) == (1.0, 1.0, False)
    assert verdict(result) == "no change (not significant)"


def test_compare_overlapping_samples_is_not_significant():
    ref = [10.0, 11.0, 12.0, 13.0, 14.0]
    result = stats.compare_samples(ref, [10.5, 11.5, 12.5, 13.5, 14.5])
    assert not result.significant
    assert verdict(result) == "1.04× slower (not significant)"


def test_geometric_mean():
    assert stats.geometric_mean([2.0, 0.5, 1.0]) == pytest.approx(1.0)
    assert stats.geometric_mean([4.0, 1.0]) == pytest.approx(2.0)
    assert math.isnan(stats.geometric_mean([]))
