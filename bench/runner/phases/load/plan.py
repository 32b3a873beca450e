"""What the load phase measures: which engines, at which rates, on which schedule.

- ``load_engines``: the default set, picked from the registry by role and configuration
  (``default_load_engines``), or the ``--load-engines`` given;
- ``scripted_latency_ms`` / ``latency_target_ms``: the scenario's scripted run time under
  the load profile (computed by playing the script on the mock's latency model) and the
  target, that time × ``load_target_factor``;
- ``level_plan``: one level — Poisson arrivals at ``rate`` runs/s split over ``processes``
  independent seeded streams (the same streams for every engine: common random numbers),
  a ramp and a measurement window, the early-stop limits;
- ``next_rate``: the sweep's search over the grid of rates (up while sustained, down while
  not; see ``docs/measurement.md``, "The load phase").
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


def default_processes(cores: int | None = None) -> tuple[int, ...]:
    """One process, and as many as the machine has cores."""
    n = machine_cores() if cores is None else cores
    return tuple(dict.fromkeys((1, n)))


def default_load_engines(engines: Sequence[str]) -> tuple[str, ...]:
    """The engines the load phase measures by default, among ``engines`` (in their order):
    the bare loop and the headline pairs (``--load-engines all``: every engine).

    From the registry, never an outcome-only variant: the first engine of the ``floor``
    role (the raw loop, the host's own ceiling); every non-streaming ``self-built`` engine
    (the plain and the production scheduler); and LangChain's representative
    (``REPRESENTATIVE``: what its docs write, ``lc-create-agent``) with its first
    non-streaming production variant (``lc-create-agent-prod``).
    """
    from bench.engines.registry import REPRESENTATIVE, SPECS

    specs = [s for s in SPECS if not s.outcome_only]
    picked: set[str] = set()
    floor = [s.name for s in specs if s.role == "floor"]
    picked.update(floor[:1])
    picked.update(s.name for s in specs if s.role == "self-built" and not s.streams)
    lead = REPRESENTATIVE["langchain"]
    picked.add(lead)
    production = [
        s.name
        for s in specs
        if s.name.startswith(lead) and s.configuration == "production" and not s.streams
    ]
    picked.update(production[:1])
    return tuple(e for e in engines if e in picked)


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
) -> Level:
    """The schedules of one level (see the module docstring)."""
    scripted_s = scripted_ms / 1000
    target_s = scripted_s * target_factor
    window = max(window_s, min_runs / rate)
    ramp_s = ramp * scripted_s
    timeout_s = timeout_factor * target_s
    # arrivals go on until the last measured run is done, at the latest timeout_s after it
    duration = ramp_s + window + max(scripted_s, timeout_s)
    per_process = rate / processes
    streams = [
        arrivals(
            per_process, duration, stats.seed_for(seed, "load", rate, processes, i), max_arrivals
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


__all__ = [
    "DEFAULT_RATES",
    "MAX_PROCESSES",
    "MAX_RATE",
    "Level",
    "arrivals",
    "default_load_engines",
    "default_processes",
    "error_limit",
    "late_limit",
    "latency_target_ms",
    "level_plan",
    "next_rate",
    "schedule_dict",
    "scripted_latency_ms",
    "sweep",
    "sweep_start",
]
