"""Bootstrap intervals over runs and over rounds, pooled geometric means, per-scenario spread."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.results import stats


def test_the_interval_of_the_median_covers_the_true_median_about_95_percent_of_the_time():
    # synthetic samples of a known distribution: lognormal, true median exp(0) = 1
    rng = np.random.default_rng(42)
    trials = 200
    covered = 0
    for i in range(trials):
        sample = rng.lognormal(0.0, 0.5, size=40)
        estimate = stats.bootstrap(sample, resamples=500, seed=i)
        covered += estimate.low <= 1.0 <= estimate.high
    # a percentile bootstrap of the median is close to nominal at n = 40 (binomial noise
    # of 200 trials: ±3 %); a broken interval (too narrow, or off-centre) falls well outside
    assert 0.88 <= covered / trials <= 0.99


def test_the_same_seed_gives_the_same_interval_and_resamples():
    values = [10.0 + (i % 7) * 0.3 for i in range(50)]
    first = stats.bootstrap(values, seed=3)
    again = stats.bootstrap(values, seed=3)
    other = stats.bootstrap(values, seed=4)
    assert (first.point, first.low, first.high) == (again.point, again.low, again.high)
    assert np.array_equal(first.resamples, again.resamples)
    assert not np.array_equal(first.resamples, other.resamples)
    assert first.point == 10.9
    assert first.resamples.shape == (stats.RESAMPLES,)
    assert not first.resamples.flags.writeable  # an estimate is a record, not a buffer
    # the interval is the 2.5th and 97.5th percentile of the resamples
    assert (first.low, first.high) == tuple(np.percentile(first.resamples, [2.5, 97.5]))


def test_summarize_uses_the_same_draws_as_the_bootstrap():
    values = [float(v) for v in range(1, 21)]
    summary = stats.summarize(values, seed=5)
    estimate = stats.bootstrap(values, seed=5)
    assert (summary.ci_low, summary.ci_high) == (estimate.low, estimate.high)


def test_a_verdict_can_be_evaluated_on_every_resample():
    values = [1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 0.8, 1.0]
    estimate = stats.bootstrap(values, seed=0)
    share = estimate.agreement(lambda medians: medians > 1.0)
    assert share == pytest.approx(float(np.mean(estimate.resamples > 1.0)))
    assert 0.0 < share < 1.0  # the median sits on the threshold: resamples disagree
    assert estimate.agreement(lambda medians: medians > 0.5) == 1.0


def test_too_few_values_have_no_interval():
    one = stats.bootstrap([4.0])
    assert one.point == 4.0 and math.isnan(one.low) and math.isnan(one.high)
    assert np.isnan(one.resamples).all() and one.resamples.shape == (stats.RESAMPLES,)
    none = stats.bootstrap([None, math.nan])
    assert math.isnan(none.point) and math.isnan(none.agreement(lambda v: v > 0))


def test_a_bootstrap_over_rounds_sees_the_variation_between_rounds():
    # three rounds (worker processes) whose levels differ, with little noise inside a round:
    # resampling runs treats 60 runs as independent and gives a narrow interval; resampling
    # rounds gives the honest one, as wide as the rounds are apart
    rng = np.random.default_rng(0)
    levels = (10.0, 11.0, 12.0)
    values = [level + rng.normal(0, 0.05) for level in levels for _ in range(20)]
    rounds = [r for r in range(3) for _ in range(20)]
    by_run = stats.bootstrap(values, seed=1)
    by_round = stats.bootstrap(values, groups=rounds, seed=1)
    assert by_round.point == by_run.point
    assert by_run.high - by_run.low < 1.0
    assert by_round.low < 10.5 and by_round.high > 11.5
    assert np.isfinite(by_round.resamples).all()
    again = stats.bootstrap(values, groups=rounds, seed=1)  # seeded
    assert np.array_equal(by_round.resamples, again.resamples)


def _grouped_bootstrap_loop(values, groups, statistic, resamples, seed):
    """The grouped bootstrap as it was written before it was vectorised: one Python
    concatenation per resample (kept here only, as the reference the fast one must match)."""
    labels = list(dict.fromkeys(groups))
    members = [
        np.asarray([v for v, g in zip(values, groups, strict=True) if g == k]) for k in labels
    ]
    picks = np.random.default_rng(seed).integers(0, len(members), size=(resamples, len(members)))
    return np.asarray(
        [float(statistic(np.concatenate([members[i] for i in row]))) for row in picks]
    )


def _p90(a, axis=None):
    return np.percentile(a, 90, axis=axis)


@pytest.mark.parametrize("statistic", [np.median, np.mean, _p90])
def test_the_vectorised_grouped_bootstrap_draws_exactly_what_the_loop_draws(statistic):
    # rounds of unequal sizes (a crashed run, a cell with fewer repeats), so that resamples
    # have different total lengths
    rng = np.random.default_rng(7)
    sizes = (15, 9, 15, 1, 12)
    values = [float(v) for n in sizes for v in rng.lognormal(0, 0.3, n)]
    groups = [r for r, n in enumerate(sizes) for _ in range(n)]
    fast = stats.bootstrap(values, statistic, groups=groups, resamples=500, seed=11)
    slow = _grouped_bootstrap_loop(values, groups, statistic, 500, 11)
    assert np.array_equal(fast.resamples, slow)
    assert len(set(slow)) > 20  # the draws really differ from one another


def test_the_concatenation_keeps_the_picked_order():
    # an order-sensitive statistic (the first value of the concatenation) sees each row's
    # groups in the order they were drawn
    members = [np.asarray([1.0, 2.0]), np.asarray([3.0]), np.asarray([4.0, 5.0, 6.0])]
    picks = np.asarray([[2, 0, 1], [1, 1, 0], [0, 2, 2], [1, 1, 1]])

    def first(a, axis=None):
        return a[..., 0] if axis is not None else a[0]

    assert stats.grouped_statistic(members, picks, first).tolist() == [4.0, 3.0, 1.0, 3.0]
    assert stats.grouped_statistic(members, picks, np.sum).tolist() == [21.0, 9.0, 33.0, 9.0]


def test_one_round_cannot_be_resampled():
    estimate = stats.bootstrap([1.0, 2.0, 3.0], groups=[0, 0, 0])
    assert estimate.point == 2.0 and math.isnan(estimate.low)


def test_geometric_mean_over_scenarios_weights_each_scenario_once():
    # scenario a has 100 runs at 1 ms, scenario b 5 runs at 100 ms: pooled runs would give
    # a median of 1 ms; weighted once each, the geometric mean is 10 ms
    samples = {"a": [1.0] * 100, "b": [100.0] * 5}
    estimate = stats.geometric_mean_over(samples, seed=0)
    assert estimate.point == pytest.approx(10.0)
    assert (estimate.low, estimate.high) == pytest.approx((10.0, 10.0))  # no spread to draw
    noisy = {"a": [0.9, 1.0, 1.1, 1.0, 0.95], "b": [90.0, 100.0, 110.0, 105.0, 95.0]}
    pooled = stats.geometric_mean_over(noisy, seed=0)
    assert pooled.point == pytest.approx(10.0)
    assert pooled.low < 10.0 < pooled.high
    assert pooled.resamples.shape == (stats.RESAMPLES,)
    assert np.array_equal(pooled.resamples, stats.geometric_mean_over(noisy, seed=0).resamples)
    # the scenarios are resampled independently: the same data under another name differs
    renamed = stats.geometric_mean_over({"c": noisy["a"], "d": noisy["b"]}, seed=0)
    assert not np.array_equal(pooled.resamples, renamed.resamples)


def test_geometric_mean_needs_positive_values():
    estimate = stats.geometric_mean_over({"a": [1.0, 2.0], "b": [-1.0, -2.0]})
    assert math.isnan(estimate.point)
    assert math.isnan(stats.geometric_mean_over({}).point)


def test_spread_over_scenarios():
    spread = stats.spread({"a": [5.4, 5.5, 5.6], "b": [27.0, 27.6, 28.0], "c": [], "d": [9.0]})
    assert spread == stats.Spread(
        by_scenario={"a": 5.5, "b": 27.6, "d": 9.0},
        low=5.5,
        high=27.6,
        lowest="a",
        highest="b",
    )
    assert spread.ratio == pytest.approx(27.6 / 5.5)
    empty = stats.spread({})
    assert empty.lowest is None and math.isnan(empty.ratio)


def test_seed_for_gives_independent_reproducible_streams():
    a = np.random.default_rng(stats.seed_for(0, "lc", "customer_returns")).integers(0, 10**9)
    b = np.random.default_rng(stats.seed_for(0, "lc", "customer_returns")).integers(0, 10**9)
    c = np.random.default_rng(stats.seed_for(0, "scheduler", "customer_returns")).integers(0, 10**9)
    assert a == b != c
