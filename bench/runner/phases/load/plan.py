"""What the load phase measures: which engines, at which rates, on which schedule.

- ``load_engines``: the default set, picked from the registry by role and configuration
  (``default_load_engines``), or the ``--load-engines`` given;
- ``scripted_latency_ms`` / ``latency_target_ms``: the scenario's scripted run time under
  the load profile (computed by playing the script on the mock's latency model) and the
  target, that time × ``load_target_factor``;
- ``level_plan``: one level — Poisson arrivals at ``rate`` runs/s split over ``processes``
  independent seeded streams (the same streams for every engine: common random numbers),
  a ramp and a measurement window, the early-stop limits;
- ``next_rate`` / ``sweep``: a walk over an explicit grid of rates (``--load-rates``: up
  while sustained, down while not);
- ``search_next`` / ``search``: the default search when no grid is given — a level at the
  common rate ``COMMON_RATE`` (it calibrates: its CPU per run gives a first estimate), then
  a bracket and a bisection on a log scale until the highest sustained rate and the lowest
  one not sustained are within ``RESOLUTION`` of each other, both ends confirmed by a
  second trial with a window ``CONFIRM_WINDOW`` times as long and fresh arrivals (see
  ``docs/measurement.md``, "The load phase").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.results import stats
from bench.runner.metadata import machine_cores
from bench.runner.phases.load.openloop import Schedule

DEFAULT_RATES = (10.0, 25.0, 50.0, 100.0, 200.0, 400.0)
MAX_RATE = 5000.0  # runs/s, all processes together (a bound on every CLI rate)
MAX_PROCESSES = 64

# the search (no --load-rates): every sweep's first level, at a rate every engine of the
# default set sustains in one process (lc-create-agent-prod held 10-25 runs/s): the rate
# their CPU per run compares at, and the calibration of the search
COMMON_RATE = 10.0
RESOLUTION = 1.2  # the bracket [sustained, not sustained] ends at this ratio (±9.5 %)
# more processes: a coarser bracket, no confirmations (the phase's time budget)
MULTI_RESOLUTION = 1.45  # ±20 %
STEP = 1.4  # up (or down) by this factor until the verdict changes (one bisection: ≤ 1.2)
# the first rate above the common one: this share of what the measured CPU per run would
# allow on the sweep's cores (CPU per run rises with the rate: 4.7 → 6.5 ms, 50 → 100)
CALIBRATION_SHARE = 0.6
CONFIRM_WINDOW = 1.5  # a confirmation's window, × the level's
SEARCH_FLOOR = 2.5  # runs/s: the search goes no lower (capacity "< 2.5")
SEARCH_CEILING = 2000.0  # runs/s: nor higher (and never past the arrivals one level holds)
SEARCH_MAX_LEVELS = 10  # per sweep, confirmations included
MULTI_MAX_LEVELS = 6  # per multi-process sweep


def default_processes(cores: int | None = None) -> tuple[int, ...]:
    """One process, and as many as the machine has cores."""
    n = machine_cores() if cores is None else cores
    return tuple(dict.fromkeys((1, n)))


def default_load_engines(engines: Sequence[str]) -> tuple[str, ...]:
    """The engines the load phase measures by default, among ``engines``: the bare loop and
    the headline pairs (``bench.engines.registry.headline_engines``; ``--load-engines all``:
    every engine)."""
    from bench.engines.registry import headline_engines

    return headline_engines(engines)


def default_multi_engines(engines: Sequence[str]) -> tuple[str, ...]:
    """The engines of the default set whose multi-process sweeps run by default: the bare
    loop (the host's own ceiling) and the production pair. The default pair is measured in
    one process only: what a deployment serves is asked of the production configurations,
    and the default pair's sweeps cost ~45 s of the phase."""
    from bench.engines.registry import REGISTRY

    return tuple(
        e
        for e in default_load_engines(engines)
        if REGISTRY[e].role == "floor" or REGISTRY[e].configuration == "production"
    )


def scripted_latency_ms(scenario: Any, latency: str) -> float:
    """What the mock scripts for one run of ``scenario`` under the profile (ms): every turn
    in full, plus the tools' scripted latency (``bench.engines.kit.ttft.scripted_times_s``)."""
    from bench.engines.kit.ttft import scripted_times_s
    from bench.referee import LatencyProfile

    _floor, whole = scripted_times_s(scenario, LatencyProfile.named(latency))
    return whole * 1000


def latency_target_ms(scripted_ms: float, factor: float) -> float:
    """The p95 a level must stay within: the scripted latency × ``factor``."""
    return scripted_ms * factor


def arrivals(rate: float, duration_s: float, seed: np.random.SeedSequence, cap: int) -> list[float]:
    """Poisson arrival times in [0, duration_s) at ``rate`` per second (at most ``cap``)."""
    if rate <= 0 or duration_s <= 0:
        return []
    rng = np.random.default_rng(seed)
    expected = rate * duration_s
    n = int(expected + 6 * math.sqrt(expected) + 16)
    times = np.cumsum(rng.exponential(1.0 / rate, size=n))
    kept = times[times < duration_s][:cap]
    return [round(float(t), 6) for t in kept]


def late_limit(n: int, q: float = 95.0) -> int:
    """The fewest of ``n`` runs over the target that put the q-th percentile over it
    (linear interpolation): the early stop's threshold."""
    if n <= 0:
        return 1
    position = (n - 1) * q / 100
    return max(1, n - math.floor(position))


def error_limit(n: int, budget: float) -> int:
    """The fewest failed or timed-out runs of ``n`` that exceed the error ``budget`` share."""
    return math.floor(n * budget) + 1


@dataclass(frozen=True)
class Level:
    """One level: every process's schedule, and what the row records about it."""

    rate: float
    processes: int
    schedules: tuple[Schedule, ...]
    window_s: float
    ramp_s: float
    timeout_s: float
    scripted_ms: float
    target_ms: float

    @property
    def measured(self) -> int:
        return sum(len(s.measured_range) for s in self.schedules)

    @property
    def est_s(self) -> float:
        """How long the level takes when the engine keeps up."""
        return self.ramp_s + self.window_s + self.scripted_ms / 1000 + 0.3


def level_plan(
    rate: float,
    processes: int,
    *,
    seed: int,
    scripted_ms: float,
    target_factor: float,
    window_s: float,
    min_runs: int,
    ramp: float,
    timeout_factor: float,
    error_budget: float,
    max_arrivals: int,
    trial: int = 0,
) -> Level:
    """The schedules of one level (see the module docstring). ``trial`` 1 is a
    confirmation: its window is ``CONFIRM_WINDOW`` × longer and its arrivals are fresh."""
    scripted_s = scripted_ms / 1000
    target_s = scripted_s * target_factor
    window = max(window_s * (CONFIRM_WINDOW if trial else 1.0), min_runs / rate)
    ramp_s = ramp * scripted_s
    timeout_s = timeout_factor * target_s
    # arrivals go on until the last measured run is done, at the latest timeout_s after it
    duration = ramp_s + window + max(scripted_s, timeout_s)
    per_process = rate / processes
    names: tuple[object, ...] = ("confirm",) if trial else ()
    streams = [
        arrivals(
            per_process,
            duration,
            stats.seed_for(seed, "load", rate, processes, i, *names),
            max_arrivals,
        )
        for i in range(processes)
    ]
    measured = sum(sum(1 for t in s if ramp_s <= t < ramp_s + window) for s in streams)
    limits = {
        "late_limit": late_limit(measured),
        "error_limit": error_limit(measured, error_budget),
    }
    schedules = tuple(
        Schedule(
            offsets=tuple(s),
            window=(ramp_s, ramp_s + window),
            interval=(ramp_s + scripted_s, ramp_s + window + scripted_s),
            timeout_s=timeout_s,
            target_s=target_s,
            **limits,
        )
        for s in streams
    )
    return Level(
        rate, processes, schedules, window, ramp_s, timeout_s, scripted_ms, target_s * 1000
    )


def schedule_dict(schedule: Schedule) -> dict[str, Any]:
    """A schedule as the worker's ``load`` command carries it."""
    return {
        "offsets": list(schedule.offsets),
        "window": list(schedule.window),
        "interval": list(schedule.interval),
        "timeout_s": schedule.timeout_s,
        "target_s": schedule.target_s,
        "late_limit": schedule.late_limit,
        "error_limit": schedule.error_limit,
        "tick_s": schedule.tick_s,
    }


def next_rate(grid: Sequence[float], results: Mapping[float, bool], start: float) -> float | None:
    """The next rate of a sweep, given the verdicts so far (rate → sustained), or None.

    Start at ``start``; while the engine sustains its rate go up the grid, else go down;
    stop at the first change of verdict or at either end. So the answer brackets the
    capacity: the highest sustained rate and the lowest one that is not.
    """
    rates = sorted(grid)
    if start not in results:
        return start
    going_up = results[start]
    i = rates.index(start)
    while True:
        i += 1 if going_up else -1
        if not 0 <= i < len(rates):
            return None
        rate = rates[i]
        if rate not in results:
            return rate
        if results[rate] != going_up:
            return None


def sweep_start(grid: Sequence[float], start: float, one_process: Mapping[float, bool]) -> float:
    """Where a multi-process sweep starts: at the first rate one process did not sustain
    (what more processes are for), at the top of the grid if it sustained them all, else
    at ``start``."""
    if not one_process:
        return start
    failed = sorted(r for r, ok in one_process.items() if not ok)
    passed = sorted(r for r, ok in one_process.items() if ok)
    if failed and passed:
        above = [r for r in failed if r > passed[-1]]
        return above[0] if above else failed[-1]
    if passed:
        higher = [r for r in sorted(grid) if r > passed[-1]]
        return higher[0] if higher else passed[-1]
    return min(failed)


def sweep(
    grid: Sequence[float],
    start: float,
    measure: Callable[[float], bool | None],
    known: Mapping[float, bool] | None = None,
) -> dict[float, bool]:
    """Run a sweep: ``measure(rate)`` → sustained (None: the level was lost; the sweep
    stops). ``known`` verdicts (a resumed run) are used instead of measuring again."""
    results: dict[float, bool] = {}
    known = dict(known or {})
    while (rate := next_rate(grid, results, start)) is not None:
        verdict = known[rate] if rate in known else measure(rate)
        if verdict is None:
            break
        results[rate] = verdict
    return results


@dataclass(frozen=True)
class Trial:
    """What the search needs of one measured level: its verdict, whether it was a
    confirmation (``trial`` 1), and its CPU per run (ms; None: unknown)."""

    rate: float
    sustained: bool
    confirmed: bool = False
    cpu_ms: float | None = None


@dataclass(frozen=True)
class Step:
    """The search's next level: its rate, and whether it confirms an earlier verdict."""

    rate: float
    confirm: bool = False


def nice_rate(rate: float, digits: int = 2) -> float:
    """``rate`` to ``digits`` significant figures (a readable, reproducible level)."""
    if rate <= 0:
        return rate
    exponent = math.floor(math.log10(rate)) - digits + 1
    return float(round(round(rate / 10**exponent) * 10**exponent, 6))


def bracket(results: Mapping[float, Trial]) -> tuple[float | None, float | None]:
    """(highest sustained rate below the lowest one not sustained, that lowest one): a
    sustained rate above a failure does not count (noise cannot lift a capacity)."""
    failed = [r for r, t in results.items() if not t.sustained]
    hi = min(failed) if failed else None
    passed = [r for r, t in results.items() if t.sustained and (hi is None or r < hi)]
    return (max(passed) if passed else None), hi


def first_estimate(cpu_ms: float | None, cores: float) -> float | None:
    """The calibration: ``CALIBRATION_SHARE`` × the rate ``cores`` would serve at
    ``cpu_ms`` of CPU per run (None: no CPU per run measured)."""
    if cpu_ms is None or not cpu_ms > 0 or not math.isfinite(cpu_ms):
        return None
    return CALIBRATION_SHARE * cores * 1000.0 / cpu_ms


def _between(lo: float, hi: float) -> float | None:
    """A readable rate strictly between ``lo`` and ``hi`` near their geometric middle (but
    at most ``STEP`` below ``hi``), or None when the bracket cannot be split."""
    target = max(math.sqrt(lo * hi), hi / STEP)
    for digits in (2, 3, 4):
        rate = nice_rate(target, digits)
        if lo < rate < hi:
            return rate
    return None


def search_next(
    results: Mapping[float, Trial],
    *,
    cores: float = 1.0,
    common: float | None = COMMON_RATE,
    confirm: bool = True,
    floor: float = SEARCH_FLOOR,
    ceiling: float = SEARCH_CEILING,
    resolution: float = RESOLUTION,
    max_levels: int = SEARCH_MAX_LEVELS,
    levels_so_far: int | None = None,
    prior: float | None = None,
) -> Step | None:
    """The search's next level given the trials so far (rate → its latest ``Trial``), or
    None when the capacity is bracketed to ``resolution`` (and, with ``confirm``, both
    ends confirmed), censored at ``floor`` or ``ceiling``, or ``max_levels`` are spent.

    1. the common rate (it calibrates: ``first_estimate`` from its CPU per run, or
       ``prior`` if lower — a multi-process sweep passes the one-process capacity × its
       processes, which more processes cannot beat); with ``common=None``, ``prior``
       itself (the phase's multi-process sweeps: CPU per run is compared in one process);
    2. sustained so far: up to the estimate (at least ``STEP`` above the common rate),
       then by ``STEP``; nothing sustained: down by ``STEP``;
    3. a bracket wider than ``resolution``: a rate near its geometric middle;
    4. with ``confirm``: the bracket's lower end, then its upper end, measured again.
    """
    count = len(results) if levels_so_far is None else levels_so_far
    if count >= max_levels:
        return None
    if common is None and not results:  # no common level: start at the prior
        return None if prior is None else Step(min(nice_rate(prior), ceiling))
    if common is not None and common not in results:
        return Step(common)
    lo, hi = bracket(results)
    if hi is None:  # everything sustained: go up
        assert lo is not None
        if lo >= ceiling:
            return None
        estimate = first_estimate(results[common].cpu_ms, cores) if common is not None else None
        if prior is not None:
            estimate = prior if estimate is None else min(estimate, prior)
        up = lo * STEP
        if lo == common and estimate is not None:
            up = max(up, estimate)
        return Step(min(nice_rate(up), ceiling))
    if lo is None:  # nothing sustained: go down
        down = nice_rate(hi / STEP)
        if hi <= floor:
            return None
        return Step(max(down, floor))
    if hi / lo > resolution * (1 + 1e-9):
        rate = _between(lo, hi)
        if rate is not None:
            return Step(rate)
    if confirm:
        for end in (lo, hi):
            if not results[end].confirmed:
                return Step(end, confirm=True)
    return None


def search(
    measure: Callable[[Step], Trial | None],
    known: Mapping[float, Trial] | None = None,
    **options: Any,
) -> dict[float, Trial]:
    """Run the search: ``measure(step)`` → the level's ``Trial`` (None: the level was lost;
    the search stops). ``known`` trials (a resumed run: each rate's latest) are used
    instead of measuring again when they answer the step (a confirmed trial answers a
    first one too). ``options``: those of ``search_next``."""
    results: dict[float, Trial] = {}
    known = dict(known or {})
    levels = 0
    while (step := search_next(results, levels_so_far=levels, **options)) is not None:
        old = known.get(step.rate)
        if old is not None and (old.confirmed or not step.confirm):
            trial: Trial | None = old
        else:
            trial = measure(step)
        if trial is None:
            break
        levels += 1
        results[step.rate] = trial
    return results


__all__ = [
    "CALIBRATION_SHARE",
    "COMMON_RATE",
    "CONFIRM_WINDOW",
    "DEFAULT_RATES",
    "MAX_PROCESSES",
    "MAX_RATE",
    "MULTI_MAX_LEVELS",
    "MULTI_RESOLUTION",
    "RESOLUTION",
    "SEARCH_CEILING",
    "SEARCH_FLOOR",
    "SEARCH_MAX_LEVELS",
    "STEP",
    "Level",
    "Step",
    "Trial",
    "arrivals",
    "bracket",
    "default_load_engines",
    "default_multi_engines",
    "default_processes",
    "error_limit",
    "first_estimate",
    "late_limit",
    "latency_target_ms",
    "level_plan",
    "next_rate",
    "nice_rate",
    "schedule_dict",
    "scripted_latency_ms",
    "search",
    "search_next",
    "sweep",
    "sweep_start",
]
