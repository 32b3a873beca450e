"""Pooled figures: every scenario of the pool, t-intervals over rounds, paired ratios."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t

from bench.results import pooling, stats

T2 = float(t.ppf(0.975, 2))  # Student's t, 2 degrees of freedom (three rounds)


def cells(engine: str, levels: dict[str, list[float]], runs: int = 3) -> list[tuple]:
    """Observations of ``engine``: per scenario, one level per round (every run at it)."""
    return [
        (engine, scenario, r, level)
        for scenario, by_round in levels.items()
        for r, level in enumerate(by_round)
        for _ in range(runs)
    ]


def test_a_pooled_figure_is_the_t_interval_over_per_round_geometric_means():
    # per round: geometric mean over the two scenarios of that round's median
    observations = cells("ours", {"a": [1.0, 2.0, 4.0], "b": [4.0, 2.0, 4.0]})
    pool = pooling.pool(observations, ["a", "b"], seed=1)
    figure = pool.figures["ours"]
    assert figure.by_round == pytest.approx({0: 2.0, 1: 2.0, 2: 4.0})
    logs = np.log([2.0, 2.0, 4.0])
    half = T2 * logs.std(ddof=1) / math.sqrt(3)
    assert (figure.estimate.point, figure.estimate.low, figure.estimate.high) == pytest.approx(
        (math.exp(logs.mean()), math.exp(logs.mean() - half), math.exp(logs.mean() + half))
    )
    assert figure.method == "rounds" and figure.scenarios == ("a", "b")
    # each scenario's value: the geometric mean of its round medians; their spread
    assert figure.spread.by_scenario == pytest.approx(
        {"a": 2.0, "b": 4.0 ** (2 / 3) * 2 ** (1 / 3)}
    )
    assert (figure.spread.lowest, figure.spread.highest) == ("a", "b")
    assert pool.left_out == {}


def test_the_draws_are_the_same_t_distribution():
    rng = np.random.default_rng(3)
    observations = [
        ("ours", s, r, v) for s in "ab" for r in range(3) for v in rng.lognormal(r * 0.1, 0.1, 9)
    ]
    estimate = pooling.pool(observations, "ab", resamples=40_000, seed=2).figures["ours"].estimate
    assert estimate.resamples.shape == (40_000,)
    assert not estimate.resamples.flags.writeable
    low, high = np.percentile(estimate.resamples, [2.5, 97.5])
    assert low == pytest.approx(estimate.low, rel=0.01)
    assert high == pytest.approx(estimate.high, rel=0.01)
    assert np.median(estimate.resamples) == pytest.approx(estimate.point, rel=0.005)
    again = pooling.pool(observations, "ab", resamples=40_000, seed=2).figures["ours"].estimate
    assert np.array_equal(estimate.resamples, again.resamples)


def test_a_ratio_is_paired_within_rounds():
    # the rounds differ a lot (a slow machine in round 2, for both engines alike), the ratio
    # is exactly 3 in every round: paired, the ratio is known exactly, although each engine's
    # own figure is uncertain; independent intervals would make it look uncertain too
    levels = {"a": [1.0, 1.2, 2.0], "b": [2.0, 2.2, 4.0]}
    theirs = {s: [3 * v for v in by_round] for s, by_round in levels.items()}
    pool = pooling.pool(cells("ours", levels) + cells("theirs", theirs), ["a", "b"], seed=0)
    ours = pool.figures["ours"].estimate
    assert ours.high / ours.low > 2  # each figure alone is far from certain
    ratio = pool.ratio("theirs", "ours")
    assert ratio.method == "rounds"
    assert ratio.by_round == pytest.approx({0: 3.0, 1: 3.0, 2: 3.0})
    assert (ratio.estimate.point, ratio.estimate.low, ratio.estimate.high) == pytest.approx(
        (3.0, 3.0, 3.0)
    )
    # resample by resample (as the verdicts divide) it is paired too: the draws are shared
    drawn = pool.figures["theirs"].estimate.resamples / ours.resamples
    assert np.allclose(drawn, 3.0)
    assert np.allclose(ratio.estimate.resamples, drawn)
    assert ratio.scenarios == ("a", "b")


def test_a_ratio_comes_with_the_spread_of_its_per_scenario_ratios():
    ours = {"a": [1.0, 1.0, 1.0], "b": [2.0, 2.0, 2.0], "c": [1.0, 1.1, 0.9]}
    theirs = {"a": [10.0, 10.0, 10.0], "b": [50.0, 50.0, 50.0], "c": [20.0, 22.0, 18.0]}
    pool = pooling.pool(cells("ours", ours) + cells("theirs", theirs), ["a", "b", "c"])
    ratio = pool.ratio("theirs", "ours")
    assert ratio.spread.by_scenario == pytest.approx({"a": 10.0, "b": 25.0, "c": 20.0})
    assert (ratio.spread.low, ratio.spread.lowest) == (pytest.approx(10.0), "a")
    assert (ratio.spread.high, ratio.spread.highest) == (pytest.approx(25.0), "b")
    assert ratio.estimate.point == pytest.approx((10 * 25 * 20) ** (1 / 3))


def test_an_engine_that_lacks_a_scenario_is_left_out_with_the_reason_never_the_scenario():
    every = {"a": [1.0] * 3, "b": [2.0] * 3, "c": [3.0] * 3, "d": [4.0] * 3}
    observations = (
        cells("ours", every)
        + cells("old-line", {"a": every["a"], "b": every["b"]})  # ran two of the four
        + cells("flaky", {s: every[s] for s in "abc"})  # ran d, never completed it
    )
    attempted = {"ours": set("abcd"), "old-line": set("ab"), "flaky": set("abcd"), "dead": {"a"}}
    pool = pooling.pool(observations, ["a", "b", "c", "d"], attempted=attempted)
    assert pool.scenarios == ("a", "b", "c", "d")
    assert set(pool.figures) == {"ours"}
    assert pool.figures["ours"].scenarios == ("a", "b", "c", "d")
    assert pool.left_out == {
        "old-line": "did not run c, d (2 of the 4 pooled scenarios)",
        "flaky": "completed no run of d (1 of the 4 pooled scenarios)",
        "dead": "did not run b, c, d; completed no run of a (4 of the 4 pooled scenarios)",
    }
    with pytest.raises(KeyError, match="old-line has no figure over this pool: did not run c, d"):
        pool.ratio("old-line", "ours")


def test_a_round_that_lacks_a_scenario_is_left_out_for_that_engine():
    observations = [
        *cells("ours", {"a": [1.0, 2.0, 5.0], "b": [1.0, 2.0]}),  # round 2 lost b (a crash)
        *cells("theirs", {"a": [3.0, 6.0, 9.0], "b": [3.0, 6.0, 9.0]}),
    ]
    pool = pooling.pool(observations, ["a", "b"])
    ours = pool.figures["ours"]
    assert ours.rounds == (0, 1) and ours.left_out_rounds == (2,)
    assert ours.estimate.point == pytest.approx(math.sqrt(2.0))
    ratio = pool.ratio("theirs", "ours")  # over the rounds both have
    assert ratio.by_round == pytest.approx({0: 3.0, 1: 3.0})


def test_one_round_has_no_between_process_interval_and_says_so():
    rng = np.random.default_rng(0)
    observations = [("ours", s, 0, v) for s in "ab" for v in rng.lognormal(0, 0.2, 20)]
    figure = pooling.pool(observations, "ab", seed=0).figures["ours"]
    assert figure.method == "runs" and figure.by_round == {}
    by_runs = stats.geometric_mean_over(
        {s: [v for e, sc, r, v in observations if sc == s] for s in "ab"}, seed=figure_seed()
    )
    assert figure.estimate.point == pytest.approx(by_runs.point)
    assert figure.estimate.low < figure.estimate.point < figure.estimate.high


def figure_seed() -> int:
    import zlib

    return zlib.crc32(b"0/runs/ours")


def test_a_geometric_mean_needs_positive_medians():
    observations = cells("ours", {"a": [1.0, 1.0, 1.0], "b": [-0.5, -0.4, -0.6]})
    pool = pooling.pool(observations, ["a", "b"])
    assert pool.figures == {}
    assert pool.left_out == {"ours": "its median in b is not positive (a geometric mean needs > 0)"}


def test_non_finite_values_and_other_scenarios_are_ignored():
    observations = [
        *cells("ours", {"a": [1.0, 2.0, 4.0]}),
        ("ours", "a", 0, math.nan),
        ("ours", "a", 1, None),
        ("ours", "fault", 0, 500.0),  # not a scenario of the pool
    ]
    pool = pooling.pool(observations, ["a"])
    assert pool.figures["ours"].by_round == pytest.approx({0: 1.0, 1: 2.0, 2: 4.0})
    assert pool.scenarios == ("a",)


def test_t_interval():
    low, high = stats.t_interval([1.0, 2.0, 3.0])
    assert (low, high) == pytest.approx((2.0 - T2 / math.sqrt(3), 2.0 + T2 / math.sqrt(3)))
    assert all(math.isnan(v) for v in stats.t_interval([1.0]))
    assert stats.t_interval([2.0, 2.0]) == (2.0, 2.0)
