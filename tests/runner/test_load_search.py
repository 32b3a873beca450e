"""The load phase's default search (``loadplan.search``): the calibration at the common rate,
the bracket and the bisection, the confirmations, ``--resume``'s known trials — and the
method itself, on a simulated engine whose true capacity is known."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bench.runner.phases.load import plan as loadplan
from bench.runner.phases.load.plan import Step, Trial


def engine(capacity: float, cpu_ms: float | None = None):
    """A noiseless engine: sustains every rate up to ``capacity``; its CPU per run at the
    common rate is ``cpu_ms`` (default: what would put its capacity at 1.3× the estimate)."""
    cpu = 1000.0 / capacity * loadplan.CALIBRATION_SHARE * 1.3 if cpu_ms is None else cpu_ms
    steps: list[Step] = []

    def measure(step: Step) -> Trial:
        steps.append(step)
        return Trial(step.rate, step.rate <= capacity, step.confirm, cpu)

    return measure, steps


@pytest.mark.parametrize("capacity", [3.0, 9.0, 12.0, 47.0, 74.0, 133.0, 300.0, 950.0])
@pytest.mark.parametrize("misestimate", [0.3, 1.0, 3.0])
def test_the_search_brackets_a_known_capacity_to_the_resolution(capacity, misestimate):
    cpu = 1000.0 / capacity * loadplan.CALIBRATION_SHARE * 1.3 * misestimate
    measure, steps = engine(capacity, cpu)
    results = loadplan.search(measure)
    lo, hi = loadplan.bracket(results)
    assert lo is not None and hi is not None
    assert lo <= capacity < hi
    assert hi / lo <= loadplan.RESOLUTION * (1 + 1e-9)
    assert steps[0] == Step(loadplan.COMMON_RATE)  # the common level comes first
    # both ends confirmed, each by one longer level, and never a rate measured 3 times
    assert results[lo].confirmed and results[hi].confirmed
    assert all(sum(s.rate == r for s in steps) <= 2 for r in results)
    assert len(steps) <= loadplan.SEARCH_MAX_LEVELS


def test_a_good_calibration_costs_six_levels():
    measure, steps = engine(74.0)
    loadplan.search(measure)
    assert steps[0] == Step(loadplan.COMMON_RATE)
    assert len(steps) == 6  # common, estimate, one step, one bisection, two confirmations


def test_without_confirmations_and_coarser_the_multi_process_search_is_shorter():
    measure, steps = engine(74.0)
    results = loadplan.search(
        measure, cores=1.0, confirm=False, resolution=loadplan.MULTI_RESOLUTION
    )
    lo, hi = loadplan.bracket(results)
    assert lo <= 74.0 < hi and hi / lo <= loadplan.MULTI_RESOLUTION
    assert not any(s.confirm for s in steps) and len(steps) <= 4


def test_a_confirmation_that_changes_the_verdict_reopens_the_bracket():
    # passes 5 s windows up to 80, but a longer window only up to 70
    steps: list[Step] = []

    def measure(step: Step) -> Trial:
        steps.append(step)
        cap = 70.0 if step.confirm else 80.0
        return Trial(step.rate, step.rate <= cap, step.confirm, 1000 / 100 * 0.6 * 1.3)

    results = loadplan.search(measure)
    lo, hi = loadplan.bracket(results)
    assert lo <= 70.0 < hi and hi / lo <= loadplan.RESOLUTION
    assert results[lo].sustained and results[lo].confirmed


def test_the_search_stops_at_its_floor_and_its_ceiling():
    measure, _ = engine(1.0)
    lo, hi = loadplan.bracket(loadplan.search(measure, confirm=False))
    assert lo is None and hi == loadplan.SEARCH_FLOOR  # "< 2.5": none sustained
    measure, _ = engine(1e6, cpu_ms=1.0)
    results = loadplan.search(measure, ceiling=500.0)
    assert loadplan.bracket(results) == (500.0, None)  # "≥ 500": the highest it may offer
    assert max(results) == 500.0


def test_the_search_stops_on_a_lost_level():
    steps: list[Step] = []

    def measure(step: Step) -> Trial | None:
        steps.append(step)
        if len(steps) == 3:
            return None  # a worker died
        return Trial(step.rate, True, step.confirm, 5.0)

    results = loadplan.search(measure)
    assert len(steps) == 3 and len(results) == 2


def test_the_search_honours_known_trials_of_a_resumed_run():
    measure, _ = engine(74.0)
    done = loadplan.search(measure)
    # the file keeps each rate's latest level: replayed, the search measures nothing more
    again, steps = engine(74.0)
    assert loadplan.search(again, dict(done)) == done and steps == []
    # known but never confirmed (stopped before its confirmations): only they are measured
    known = {r: dataclasses.replace(t, confirmed=False) for r, t in done.items()}
    again, steps = engine(74.0)
    result = loadplan.search(again, known)
    assert loadplan.bracket(result) == loadplan.bracket(done)
    assert [s.confirm for s in steps] == [True, True]  # only the confirmations


def test_nice_rates_and_the_first_estimate():
    assert loadplan.nice_rate(73.6) == 74.0 and loadplan.nice_rate(133.3) == 130.0
    assert loadplan.nice_rate(1.234, 3) == 1.23
    assert loadplan.first_estimate(6.0, 1.0) == pytest.approx(100.0)
    assert loadplan.first_estimate(6.0, 2.0) == pytest.approx(200.0)
    assert loadplan.first_estimate(None, 1.0) is None
    assert loadplan.first_estimate(math.nan, 1.0) is None


def test_a_confirmation_has_a_longer_window_and_fresh_arrivals():
    values = {
        "seed": 0, "scripted_ms": 2000.0, "target_factor": 1.2, "window_s": 5.0,
        "min_runs": 30, "ramp": 0.5, "timeout_factor": 2.0, "error_budget": 0.01,
        "max_arrivals": 8000,
    }  # fmt: skip
    first = loadplan.level_plan(50.0, 1, **values)
    again = loadplan.level_plan(50.0, 1, trial=1, **values)
    assert first.window_s == 5.0 and again.window_s == 5.0 * loadplan.CONFIRM_WINDOW
    assert first.schedules[0].offsets[:20] != again.schedules[0].offsets[:20]
    assert loadplan.level_plan(50.0, 1, **values).schedules == first.schedules


# -- the method: a simulated engine with a known capacity ---------------------------------

SCRIPTED_S = 2.285  # customer_returns on the realistic profile
TARGET_S = 1.2 * SCRIPTED_S
STEPS = 3  # LLM turns a run: each needs a burst of CPU on the one event loop


def level_p95(rate: float, cpu_s: float, seconds: float, rng: np.random.Generator) -> float:
    """The p95 latency of a level on a simulated engine: Poisson runs at ``rate``, each
    ``STEPS`` bursts of ``cpu_s / STEPS`` of CPU on one FIFO server between scripted waits
    (an event loop serving every run's steps in turn), arrivals from an empty system over
    ``seconds`` (ramp + window), the runs of the window's part measured."""
    n = rng.poisson(rate * seconds)
    arrivals = np.sort(rng.uniform(0.0, seconds, n))
    burst = cpu_s / STEPS
    wait = SCRIPTED_S / STEPS
    # the event-driven queue: (ready time, run, step); served in ready order
    import heapq

    heap = [(t, i, 0) for i, t in enumerate(arrivals)]
    heapq.heapify(heap)
    free = 0.0
    done = np.zeros(n)
    while heap:
        ready, i, step = heapq.heappop(heap)
        start = max(ready, free)
        free = start + burst
        if step + 1 < STEPS:
            heapq.heappush(heap, (free + wait, i, step + 1))
        else:
            done[i] = free + wait
    window = arrivals >= seconds - 5.0
    if not window.any():
        return math.inf
    return float(np.percentile(done[window] - arrivals[window], 95))


RAMP_S = 0.5 * SCRIPTED_S  # the default ramp (load_ramp 0.5)
CONFIRM_S = RAMP_S + 5.0 * loadplan.CONFIRM_WINDOW  # a confirmation: ramp + 10 s


def capacity_over(cpu_s: float, seconds: float, seeds: int) -> float:
    """The rate at which the simulated engine's median p95 over levels of ``seconds``
    (``seeds`` of them per rate) reaches the target: found by bisection to 0.5 %."""
    rng = np.random.default_rng(12345)
    lo, hi = 0.5 / cpu_s, 1.5 / cpu_s
    while hi / lo > 1.005:
        mid = math.sqrt(lo * hi)
        p95 = np.median([level_p95(mid, cpu_s, seconds, rng) for _ in range(seeds)])
        lo, hi = (mid, hi) if p95 <= TARGET_S else (lo, mid)
    return math.sqrt(lo * hi)


def test_the_bracket_contains_the_true_capacity_in_90_percent_of_trials():
    """The search on a simulated engine (3 CPU bursts of 3.3 ms a run on one loop, the
    scripted waits between them), every level a fresh random draw. Its capacity over the
    confirmation's horizon (ramp + 10 s) is the truth the method measures; over a long
    level (200 s, steady state) the capacity is a little lower: a queue that grows by
    δ seconds per second needs slack ÷ δ seconds to break the target, so a finite level
    passes an engine up to ~slack ÷ level length (here 4 %) over its steady-state capacity.
    Both are checked: coverage of the first, and the bias against the second."""
    cpu_s = 0.010  # 10 ms of CPU a run: saturates at 100 runs/s
    truth = capacity_over(cpu_s, CONFIRM_S, seeds=9)
    steady = capacity_over(cpu_s, 200.0, seeds=3)
    assert steady <= truth * 1.01
    rng = np.random.default_rng(7)
    covered, widths, above_steady = 0, [], 0
    trials = 30
    for _ in range(trials):
        # the CPU per run the common level measures: lower than under load, and noisy
        cpu_at_common = cpu_s * rng.uniform(0.6, 0.9)

        def measure(step: Step, cpu_at_common: float = cpu_at_common) -> Trial:
            window = 5.0 * (loadplan.CONFIRM_WINDOW if step.confirm else 1.0)
            ok = level_p95(step.rate, cpu_s, RAMP_S + window, rng) <= TARGET_S
            return Trial(step.rate, ok, step.confirm, cpu_at_common * 1000)

        lo, hi = loadplan.bracket(loadplan.search(measure))
        assert lo is not None and hi is not None
        widths.append(hi / lo)
        covered += lo <= truth <= hi
        # the finite-window bias: the lower end never far over the steady-state capacity
        above_steady += lo > steady * (1 + (TARGET_S - SCRIPTED_S) / (CONFIRM_S - RAMP_S))
    assert covered >= 0.9 * trials, (truth, steady, covered)
    assert above_steady <= 0.1 * trials, (truth, steady, above_steady)
    assert max(widths) <= loadplan.RESOLUTION * (1 + 1e-9)


# -- the phase drives it ------------------------------------------------------------------


class _Store:
    def __init__(self, rows):
        self._rows = rows

    def rows(self, name):
        return list(self._rows)


def _phase(rows=(), **config):
    from bench.runner.phases.load.phase import LoadPhase
    from bench.runner.plan import RunConfig

    config = RunConfig(engines=("raw",), scenarios=("customer_returns",), **config)
    phase = LoadPhase(config, {}, _Store(rows))
    phase.scripted_ms = 2285.0
    return phase


def _row(rate, sustained, trial, processes=1):
    from tests.results.test_load_metrics import level_row

    latencies = [2100.0] * 50 if sustained else [3000.0] * 50
    return level_row("raw", rate, processes, latencies=latencies, trial=trial)


def test_the_default_config_searches_and_an_explicit_grid_walks():
    from bench.runner.plan import RunConfig

    assert _phase().searching and _phase().grid == ()
    assert not _phase(load_rates=(10.0, 25.0)).searching
    quick = RunConfig(engines=("raw",), scenarios=("x",), **RunConfig.quick_defaults())
    assert quick.load_rates == (20.0,)  # --quick: a grid


def test_the_phase_searches_one_process_with_confirmations_and_more_without():
    phase = _phase()
    calls: list[tuple[float, int, int]] = []

    def measure(rate, processes, trial=0):
        from bench.results import metrics

        calls.append((rate, processes, trial))
        return metrics.load_level(_row(rate, rate <= 74.0 * processes, trial, processes))

    one = phase._search("raw", 1, measure)
    assert calls[0] == (loadplan.COMMON_RATE, 1, 0)
    assert {t for _, _, t in calls} == {0, 1}  # confirmations in one process
    lo, hi = loadplan.bracket(one)
    assert lo <= 74.0 < hi and hi / lo <= loadplan.RESOLUTION
    calls.clear()
    two = phase._search("raw", 2, measure)
    assert {t for _, _, t in calls} == {0}  # none with more processes
    lo, hi = loadplan.bracket(two)
    assert lo <= 148.0 < hi and hi / lo <= loadplan.MULTI_RESOLUTION
    assert phase.search_ceiling(1) <= loadplan.SEARCH_CEILING
    # from the one-process capacity (× the processes, which more cannot beat): no common
    # level (CPU per run is compared in one process), the first level at that prior
    calls.clear()
    found = phase._search("raw", 2, measure, one)
    lo1, _ = loadplan.bracket(one)
    assert calls[0] == (loadplan.nice_rate(lo1 * 2), 2, 0)
    assert loadplan.COMMON_RATE not in {rate for rate, _, _ in calls}
    lo, hi = loadplan.bracket(found)
    assert lo <= 148.0 < hi and hi / lo <= loadplan.MULTI_RESOLUTION


def test_without_a_common_rate_the_search_starts_at_its_prior():
    assert loadplan.search_next({}, common=None) is None  # nothing to start from
    assert loadplan.search_next({}, common=None, prior=123.4) == loadplan.Step(
        loadplan.nice_rate(123.4)
    )
    measure, steps = engine(100.0)
    found = loadplan.search(measure, common=None, prior=150.0, confirm=False)
    assert steps[0].rate == 150.0
    lo, hi = loadplan.bracket(found)
    assert lo is not None and hi is not None and lo <= 100.0 < hi


def test_a_prior_caps_the_first_guess():
    measure, steps = engine(100.0, cpu_ms=1.0)  # the CPU per run says 600 runs/s
    loadplan.search(measure, prior=120.0, confirm=False)
    assert steps[1].rate == 120.0
    measure, steps = engine(100.0, cpu_ms=10.0)  # 60 runs/s, under the prior: kept
    loadplan.search(measure, prior=120.0, confirm=False)
    assert steps[1].rate == 60.0


def test_resume_replays_the_latest_level_of_each_rate():
    rows = [_row(10.0, True, 0), _row(70.0, True, 0), _row(70.0, False, 1), _row(50.0, True, 0)]
    from bench.results.files import LOAD_KEY
    from bench.results.rows import latest

    phase = _phase(latest(rows, LOAD_KEY))
    known = phase._known("raw", 1)
    assert set(known) == {10.0, 50.0, 70.0}
    assert known[70.0].confirmed and not known[70.0].sustained  # the confirmation won
    assert not known[50.0].confirmed and known[10.0].cpu_ms == pytest.approx(25.0)
    assert phase._known("raw", 2) == {}


def test_by_default_only_the_floor_and_the_production_pair_get_more_processes():
    from bench.runner.phases.load.phase import engine_processes
    from bench.runner.plan import RunConfig

    engines = ("raw", "scheduler-plain", "scheduler", "lc-create-agent", "lc-create-agent-prod")
    config = RunConfig(engines=engines, scenarios=("customer_returns",))
    multi = loadplan.default_multi_engines(engines)
    assert multi == ("raw", "scheduler", "lc-create-agent-prod")
    counts = {e: engine_processes(config, e) for e in engines}
    assert all(counts[e] == counts["raw"] for e in multi)
    assert counts["scheduler-plain"] == counts["lc-create-agent"] == (1,)
    # asked for (--load-engines or --load-processes): every engine gets every count
    chosen = RunConfig(engines=engines, scenarios=("x",), load_engines=("scheduler-plain",))
    assert engine_processes(chosen, "scheduler-plain") == counts["raw"]
    given = RunConfig(engines=engines, scenarios=("x",), load_processes=(1, 2))
    assert engine_processes(given, "lc-create-agent") == (1, 2)
