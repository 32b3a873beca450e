"""The load phase's metrics: a level's verdict, capacity at the target, tails, the mock."""

from __future__ import annotations

import json
import math

import pytest

from bench.results import metrics
from bench.results.files import dumps_line
from bench.results.rows import LoadRow

TARGET = 2400.0


def level_row(engine="raw", rate=50.0, processes=1, latencies=None, **changes) -> LoadRow:
    """A load.jsonl level as the runner writes it: 50 ok runs at 2.1 s, 1 s window."""
    n = 50
    latencies = [2100.0 + i for i in range(n)] if latencies is None else latencies
    row = {
        "kind": "level",
        "engine": engine,
        "scenario": "customer_returns",
        "latency": "realistic",
        "transport": "loopback",
        "processes": processes,
        "rate": rate,
        "stream": None,
        "seed": 0,
        "scripted_ms": 2000.0,
        "target_ms": TARGET,
        "ramp_s": 2.0,
        "window_s": 1.0,
        "timeout_s": 4.8,
        "mock_processes": 2,
        "scheduled": n,
        "ok": n,
        "wrong": 0,
        "failed": 0,
        "timeouts": 0,
        "cut": 0,
        "not_run": 0,
        "latencies_ms": latencies,
        "start_lag_p99_ms": 1.5,
        "interval_s": 1.0,
        "completions": int(rate),
        "cpu_s": 0.25,
        "cpu_slices": [[0.025, int(rate) // 10]] * 10,
        "peak_rss_mb": 120.0,
        "mock_cpu_per_s": 0.1,
        "host_cpu_per_s": 0.6,
        "stopped": None,
        "left_running": 0,
        "elapsed_s": 5.3,
        "pids": [1],
        "ended_at": 1.0,
    }
    row.update(changes)
    return LoadRow.model_validate_json(dumps_line(row))


def test_a_level_within_the_target_is_sustained():
    level = metrics.load_level(level_row())
    assert level.sustained and level.why_not == ()
    assert level.p95.point == pytest.approx(2100 + 0.95 * 49)
    assert level.p95.low <= level.p95.point <= level.p95.high
    assert level.percentiles[50.0].point == pytest.approx(2124.5)
    assert level.offered_rate == 50.0 and level.achieved_rate == 50.0
    # 0.25 CPU s over 50 ok completions
    assert level.cpu_ms_per_run.point == pytest.approx(5.0)
    assert level.cores_used == pytest.approx(0.25)
    assert not level.mock_busy


def test_a_level_over_the_target_is_not_sustained():
    slow = metrics.load_level(level_row(latencies=[2000.0] * 45 + [3000.0] * 5))
    assert not slow.sustained and slow.why_not == ("p95 over the target",)


def test_failed_and_wrong_runs_break_the_error_budget():
    # one bad run of 50 is 2 %: over the 1 % budget, even though every ok run was fast
    level = metrics.load_level(level_row(ok=49, failed=1, latencies=[2100.0] * 49))
    assert not level.sustained and level.why_not == ("1 of 50 runs bad",)
    assert level.errors == 1
    wrong = metrics.load_level(level_row(ok=40, wrong=10, latencies=[2100.0] * 40))
    assert wrong.errors == 10 and "10 of 50 runs bad" in wrong.why_not


def test_a_level_that_completes_too_little_is_not_sustained():
    level = metrics.load_level(level_row(completions=24))
    assert level.achieved_rate == 24.0
    assert level.why_not == ("achieved rate under the offered rate",)
    # Poisson noise is no failure: 30 of an offered 50 still keeps up
    assert metrics.load_level(level_row(completions=30)).sustained


def test_an_early_stop_is_the_verdict_and_hides_the_achieved_rate():
    level = metrics.load_level(level_row(stopped="p95 over the target", interval_s=0.3, cut=20))
    assert level.why_not == ("stopped early: p95 over the target",)
    assert math.isnan(level.achieved_rate)
    assert level.timeouts == 20


def test_no_ok_run_achieves_zero_even_on_a_partly_sampled_interval():
    # every run wrong, and a busy host sampled a third of the interval: still 0 ok runs/s
    none_ok = level_row(ok=0, wrong=50, completions=0, interval_s=0.3, cpu_slices=[[0.02, 0]] * 3)
    assert metrics.load_level(none_ok).achieved_rate == 0.0
    # with ok runs, a partial interval says nothing about the rate
    some_ok = level_row(ok=25, wrong=25, completions=10, interval_s=0.3)
    assert math.isnan(metrics.load_level(some_ok).achieved_rate)


def test_capacity_is_the_highest_rate_sustained_below_the_first_failure():
    levels = [
        metrics.load_level(level_row(rate=50.0)),
        metrics.load_level(level_row(rate=100.0, cpu_slices=[[0.04, 10]] * 10)),
        metrics.load_level(level_row(rate=200.0, latencies=[3000.0] * 50)),
    ]
    cap = metrics.capacity(levels)
    assert (cap.engine, cap.processes, cap.rate, cap.above, cap.censored) == (
        "raw",
        1,
        100.0,
        200.0,
        False,
    )
    assert cap.p95 is levels[1].p95
    assert cap.cpu_ms_per_run.point == pytest.approx(4.0)
    cores = cap.cores_for(100.0)
    assert cores.point == pytest.approx(0.4)
    assert cores.low == pytest.approx(cap.cpu_ms_per_run.low / 10)
    assert metrics.saturation_rate(levels) == 200.0
    # CPU per run at each sustained rate, so that two sweeps compare at a rate both held
    assert set(cap.cpu_ms_by_rate) == {50.0, 100.0}
    at_50 = cap.cores_for(100.0, measured_at=50.0)
    assert at_50.point == pytest.approx(levels[0].cpu_ms_per_run.point / 10)
    slower = metrics.capacity(
        [*levels[:1], metrics.load_level(level_row(rate=100.0, latencies=[3000.0] * 50))]
    )
    assert metrics.common_rate(cap, slower) == 50.0
    assert metrics.common_rate(cap) == 100.0
    assert cap.cores_for(measured_at=25.0) is None


def test_capacity_at_the_top_of_the_grid_is_a_lower_bound_and_none_is_below_all():
    top = metrics.capacity([metrics.load_level(level_row(rate=r)) for r in (100.0, 400.0)])
    assert top.rate == 400.0 and top.censored and top.above is None
    slow = [level_row(rate=r, latencies=[9000.0] * 50) for r in (10.0, 25.0)]
    none = metrics.capacity([metrics.load_level(r) for r in slow])
    assert (none.rate, none.below_all, none.p95, none.cores_for()) == (None, 10.0, None, None)


def test_a_sustained_rate_above_a_failure_does_not_count():
    levels = [
        metrics.load_level(level_row(rate=25.0)),
        metrics.load_level(level_row(rate=50.0, latencies=[3000.0] * 50)),
        metrics.load_level(level_row(rate=100.0)),
    ]
    assert metrics.capacity(levels).rate == 25.0


def test_capacities_group_the_sweeps_and_flag_a_busy_mock():
    rows = [
        level_row("raw", 50.0, 1),
        level_row("raw", 100.0, 1, mock_cpu_per_s=0.9, latencies=[3000.0] * 50),
        level_row("scheduler", 50.0, 1),
        level_row("raw", 100.0, 2),
    ]
    levels = metrics.load_levels(rows)
    assert [(v.engine, v.processes, v.rate) for v in levels] == [
        ("raw", 1, 50.0), ("raw", 1, 100.0), ("raw", 2, 100.0), ("scheduler", 1, 50.0)
    ]  # fmt: skip
    caps = metrics.capacities(levels)
    assert list(caps) == [("raw", 1), ("raw", 2), ("scheduler", 1)]
    assert caps[("raw", 1)].mock_busy and not caps[("raw", 2)].mock_busy


def test_crashed_levels_and_mock_probes_are_not_levels():
    crashed = LoadRow.model_validate_json(
        dumps_line({**json.loads(level_row().model_dump_json()), "crashed": True})
    )
    probe = mock_row(False)
    assert metrics.load_levels([crashed, probe]) == []


def test_the_tail_ratio_at_each_rate_both_sustained():
    mine = [metrics.load_level(level_row("scheduler", r, latencies=[4000.0] * 50)) for r in (50.0, 100.0)]  # fmt: skip
    theirs = [metrics.load_level(level_row("raw", 50.0, latencies=[2000.0] * 50))]
    ratios = metrics.tail_ratio(mine, theirs, q=99.0)
    assert list(ratios) == [50.0]
    assert ratios[50.0].point == pytest.approx(2.0)


def mock_row(stream: bool) -> LoadRow:
    return LoadRow.model_validate_json(
        dumps_line(
            {
                "kind": "mock",
                "engine": "bare-http-client",
                "scenario": "customer_returns",
                "latency": "realistic",
                "transport": "loopback",
                "processes": 2,
                "rate": None,
                "stream": stream,
                "concurrency": 512,
                "requests": 900,
                "requests_per_s": 450.0,
                "mock_cpu_ms_per_request": 0.7 if stream else 0.25,
            }
        )
    )


def test_the_mock_ceiling_comes_from_its_cpu_per_request():
    ceilings = metrics.mock_ceilings([mock_row(True), mock_row(False), level_row()])
    assert [(c.stream, c.requests_per_s) for c in ceilings] == [(False, 450.0), (True, 450.0)]
    assert ceilings[0].busy_at_requests_per_s == pytest.approx(2 * 1000 / 0.25)
    assert ceilings[1].busy_at_requests_per_s == pytest.approx(2 * 1000 / 0.7)


def test_the_csv_record_has_every_column():
    record = metrics.load_record(metrics.load_level(level_row()))
    assert list(record) == metrics.LOAD_COLUMNS
    assert record["sustained"] is True and record["why_not"] == ""
    assert record["p95_ci_low"] <= record["p95_ms"] <= record["p95_ci_high"]


def test_a_capacity_is_a_bracket_with_its_resolution():
    levels = [
        metrics.load_level(level_row(rate=10.0)),
        metrics.load_level(level_row(rate=74.0)),
        metrics.load_level(level_row(rate=86.0, latencies=[3000.0] * 50)),
    ]
    cap = metrics.capacity(levels)
    assert (cap.rate, cap.above) == (74.0, 86.0)
    assert cap.resolution == pytest.approx(86 / 74)
    assert cap.plus_minus == pytest.approx(math.sqrt(86 / 74) - 1)  # ±7.8 %
    top = metrics.capacity(levels[:2])
    assert top.resolution is None and top.plus_minus is None


def test_searched_sweeps_compare_cpu_at_their_common_level():
    # two searches: a level at the common rate each, then rates of their own
    ours = metrics.capacity(
        [metrics.load_level(level_row("scheduler", r)) for r in (10.0, 120.0, 140.0)]
    )
    theirs = metrics.capacity(
        [
            metrics.load_level(level_row("lc", 10.0)),
            metrics.load_level(level_row("lc", 21.0)),
            metrics.load_level(level_row("lc", 25.0, latencies=[3000.0] * 50)),
        ]
    )
    assert metrics.common_rate(ours, theirs) == 10.0
    assert ours.cores_for(measured_at=10.0) is not None


def test_a_level_rejudged_at_other_targets():
    # 2,100-2,149 ms on 2,000 scripted: p95 2,146.55 — within 1.1× (2,200) and above
    fine = metrics.load_level(level_row())
    assert [metrics.verdict_at(fine, f) for f in (1.05, 1.1, 1.2, 1.5)] == [
        False, True, True, True,
    ]  # fmt: skip
    slow = metrics.load_level(level_row(latencies=[2000.0] * 40 + [2500.0] * 10))
    assert [metrics.verdict_at(slow, f) for f in (1.1, 1.2, 1.3)] == [False, False, True]
    # an early stop at the 1.2× target: fails 1.1× and 1.2×, unknown above — never invented
    stopped = metrics.load_level(level_row(stopped="p95 over the target", interval_s=0.3))
    assert [metrics.verdict_at(stopped, f) for f in (1.1, 1.2, 1.5)] == [False, False, None]
    errors = metrics.load_level(level_row(stopped="errors", interval_s=0.3, failed=5))
    assert [metrics.verdict_at(errors, f) for f in (1.1, 1.5)] == [False, False]
    # bad runs fail every target, however fast the rest
    bad = metrics.load_level(level_row(ok=40, wrong=10, latencies=[2100.0] * 40))
    assert metrics.verdict_at(bad, 1.5) is False


def test_the_capacity_at_other_targets_leaves_unknown_levels_out():
    levels = [
        metrics.load_level(level_row(rate=10.0)),
        metrics.load_level(level_row(rate=50.0, latencies=[2000.0] * 40 + [2500.0] * 10)),
        metrics.load_level(level_row(rate=70.0, stopped="p95 over the target", interval_s=0.3)),
    ]
    at = {f: metrics.capacity_at(levels, f) for f in metrics.SENSITIVITY_FACTORS}
    assert (at[1.1].sustained, at[1.1].fails, at[1.1].unknown) == (10.0, 50.0, 0)
    assert (at[1.2].sustained, at[1.2].fails) == (10.0, 50.0)
    # at 1.5×, 50 passes, and 70 (stopped at 1.2×) is unknown: "≥ 50", no upper end
    assert (at[1.5].sustained, at[1.5].fails, at[1.5].unknown) == (50.0, None, 1)
    assert metrics.capacity(levels).rate == at[1.2].sustained
