"""The load phase's plan: Poisson schedules, the early-stop limits, the sweep, the engines."""

from __future__ import annotations

import numpy as np
import pytest

from bench.engines import registry
from bench.engines.registry import REGISTRY, EngineSpec, EngineStyle
from bench.results import stats
from bench.runner.phases.load import plan as loadplan
from scenarios import load_scenarios

STYLE = EngineStyle("#000000", "o", "", "-")


def level(rate: float = 100.0, processes: int = 2, **changes):
    values = {
        "seed": 0,
        "scripted_ms": 2000.0,
        "target_factor": 1.2,
        "window_s": 1.0,
        "min_runs": 30,
        "ramp": 1.0,
        "timeout_factor": 2.0,
        "error_budget": 0.01,
        "max_arrivals": 8000,
    }
    values.update(changes)
    return loadplan.level_plan(rate, processes, **values)


def test_arrivals_are_seeded_poisson_streams():
    seed = stats.seed_for(0, "x")
    times = loadplan.arrivals(200.0, 50.0, seed, 100_000)
    assert times == loadplan.arrivals(200.0, 50.0, stats.seed_for(0, "x"), 100_000)
    assert times != loadplan.arrivals(200.0, 50.0, stats.seed_for(0, "y"), 100_000)
    assert times == sorted(times) and times[0] >= 0 and times[-1] < 50.0
    gaps = np.diff(times)
    # 10,000 exponential gaps of mean 5 ms: mean and coefficient of variation near 1
    assert abs(len(times) - 10_000) < 5 * 100
    assert gaps.mean() == pytest.approx(0.005, rel=0.05)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)
    assert len(loadplan.arrivals(200.0, 50.0, seed, 50)) == 50  # bounded


def test_a_level_splits_its_rate_over_independent_streams_with_one_window():
    plan = level(rate=100.0, processes=2)
    a, b = plan.schedules
    assert a.offsets != b.offsets
    assert a.window == b.window == (2.0, 3.0)  # ramp = one scripted run, then 1 s measured
    assert a.interval == (4.0, 5.0)  # the window, shifted by the scripted latency
    assert a.target_s == pytest.approx(2.4) and a.timeout_s == pytest.approx(4.8)
    # arrivals go on until the last measured run is cut at the latest
    assert max(a.offsets[-1], b.offsets[-1]) > 3.0 + 4.8 - 0.2
    assert plan.measured == len(a.measured_range) + len(b.measured_range)
    assert 60 < plan.measured < 140  # 100 runs/s for 1 s, Poisson
    assert a.late_limit == b.late_limit == loadplan.late_limit(plan.measured)
    assert a.error_limit == loadplan.error_limit(plan.measured, 0.01)
    # the same streams for every engine: the seed does not know the engine
    assert level(rate=100.0, processes=2).schedules == plan.schedules


def test_low_rates_get_a_longer_window_for_enough_runs():
    assert level(rate=10.0, processes=1).window_s == 3.0
    assert level(rate=400.0, processes=1).window_s == 1.0


@pytest.mark.parametrize("n", range(1, 301))
def test_the_late_limit_is_enough_to_put_the_p95_over_the_target(n):
    k = loadplan.late_limit(n)
    assert 1 <= k <= n
    values = [0.0] * (n - k) + [2.0] * k
    assert np.percentile(values, 95) > 1.0


def test_the_error_limit_is_the_first_count_over_the_budget():
    assert loadplan.error_limit(100, 0.01) == 2
    assert loadplan.error_limit(99, 0.01) == 1
    assert loadplan.error_limit(250, 0.01) == 3


GRID = (10.0, 25.0, 50.0, 100.0, 200.0, 400.0)


def run_sweep(capacity: float, start: float = 50.0, known=None):
    measured = []

    def measure(rate):
        measured.append(rate)
        return rate <= capacity

    return loadplan.sweep(GRID, start, measure, known), measured


def test_a_sweep_goes_up_until_the_first_failure():
    results, measured = run_sweep(capacity=150)
    assert measured == [50.0, 100.0, 200.0]
    assert results == {50.0: True, 100.0: True, 200.0: False}


def test_a_sweep_goes_down_until_the_first_success():
    results, measured = run_sweep(capacity=12)
    assert measured == [50.0, 25.0, 10.0]
    assert results == {50.0: False, 25.0: False, 10.0: True}


def test_a_sweep_stops_at_either_end_of_the_grid():
    assert run_sweep(capacity=1000)[1] == [50.0, 100.0, 200.0, 400.0]
    assert run_sweep(capacity=1)[1] == [50.0, 25.0, 10.0]


def test_a_sweep_reuses_known_verdicts_and_stops_on_a_lost_level():
    results, measured = run_sweep(capacity=150, known={50.0: True, 100.0: True})
    assert measured == [200.0] and results[200.0] is False
    lost = loadplan.sweep(GRID, 50.0, lambda rate: None if rate == 100.0 else True)
    assert lost == {50.0: True}


def test_more_processes_start_where_one_process_failed():
    assert loadplan.sweep_start(GRID, 50.0, {50.0: True, 100.0: True, 200.0: False}) == 200.0
    assert loadplan.sweep_start(GRID, 50.0, {50.0: False, 25.0: True}) == 50.0
    assert (
        loadplan.sweep_start(GRID, 50.0, {50.0: True, 100.0: True, 200.0: True, 400.0: True})
        == 400.0
    )
    assert loadplan.sweep_start(GRID, 50.0, {50.0: False, 25.0: False, 10.0: False}) == 10.0
    assert loadplan.sweep_start(GRID, 50.0, {}) == 50.0


def spec(name, role, configuration, streams=False, stack=("s",), **kw) -> EngineSpec:
    return EngineSpec(
        name, "m:C", "fam", "Fam", role, configuration, streams, "", stack, ("none",), STYLE, **kw
    )


def test_the_default_load_engines_are_the_floor_and_the_headline_pairs(monkeypatch):
    specs = (
        spec("floor-a", "floor", "default"),
        spec("floor-b", "floor", "default"),
        spec("ours-plain", "self-built", "default"),
        spec("ours", "self-built", "production"),
        spec("ours-stream", "self-built", "production", streams=True),
        spec("fw1", "framework", "default", stack=("one",)),
        spec("fw1-tuned", "framework", "default", stack=("one",)),
        spec("fw1-prod-stream", "framework", "production", streams=True, stack=("one",)),
        spec("fw1-prod", "framework", "production", stack=("one",)),
        spec("fw1-prod-inline", "framework", "production", stack=("one",)),
        spec("fw1-reduced", "framework", "production", stack=("one",), outcome_only=True),
        spec("fw2", "framework", "default", stack=("two",)),
        spec("fw2-prod", "framework", "production", stack=("two",)),
    )
    monkeypatch.setattr(registry, "SPECS", specs)
    monkeypatch.setitem(registry.REPRESENTATIVE, "langchain", "fw1")
    every = (*(s.name for s in specs), "not-in-the-registry")
    assert loadplan.default_load_engines(every) == (
        "floor-a", "ours-plain", "ours", "fw1", "fw1-prod",
    )  # fmt: skip
    # only among the run's engines, in the run's order
    assert loadplan.default_load_engines(("fw2", "ours", "fw1-tuned", "fw1")) == ("ours", "fw1")


def test_the_default_load_engines_of_this_registry():
    picked = loadplan.default_load_engines(tuple(REGISTRY))
    assert picked == (
        "raw",
        "scheduler-plain",
        "scheduler",
        "lc-create-agent",
        "lc-create-agent-prod",
    )


def test_the_target_is_the_scripted_latency_of_the_scenario_under_the_profile():
    scenario = load_scenarios()["customer_returns"]
    scripted = loadplan.scripted_latency_ms(scenario, "realistic")
    # three turns: 300 ms to the first token each, then the tokens at 50/s (jitter ±20 %)
    assert 3 * 300 * 0.8 < scripted < 3000
    assert loadplan.scripted_latency_ms(scenario, "zero") == 0
    assert loadplan.latency_target_ms(scripted, 1.2) == pytest.approx(scripted * 1.2)
