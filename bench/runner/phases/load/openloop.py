"""The open-loop load generator of one worker process: runs start on a schedule, not on demand.

A *closed* loop (the throughput phase: ``c`` tasks, each starting its next run when its last
one ends) offers less load as soon as the engine slows down, and so hides the queue a slow
engine builds ("coordinated omission"). Here the arrival times are fixed before the level
starts (Poisson, drawn by the parent: ``bench.runner.phases.load.plan.arrivals``). Each run starts
at its scheduled time — at once when the event loop comes back late — and its latency is
measured **from the scheduled time**, so the time a run waited for a busy process counts.

``OpenLoop(run, schedule).play()`` plays one level of one process:

- runs scheduled in ``schedule.window`` are *measured*; the others (the ramp before, the
  arrivals after) only keep the load steady while the measured ones live;
- a measured run still running ``timeout_s`` after its scheduled start is cancelled: a
  *timeout*, its latency censored at ``timeout_s``;
- the level stops early once its verdict is certain: ``late_limit`` measured runs over the
  latency target (then the level's p95 is over it, whatever the others do) or
  ``error_limit`` measured runs failed or timed out; measured runs still running are *cut*
  (latency censored at their age), those not yet due are *not run*;
- otherwise it ends when every measured run has ended and the throughput interval is over;
  every run still going is then cancelled.

A sampler notes the process's CPU time at the start of the throughput interval, every
``tick_s`` and at its end; after the level,
``summarize`` turns what happened into the worker's message (``bench.runner.run_worker``):
counts, latencies, CPU and ok completions per slice of the throughput interval. Outcomes
are judged after the level (``classify``), so the harness's checks never load the engine.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

OUTCOMES = ("ok", "wrong", "failed")  # what ``classify`` says about a run that ended


@dataclass(frozen=True)
class Schedule:
    """One process's share of one level, in seconds from the level's start."""

    offsets: tuple[float, ...]  # scheduled starts, ascending
    window: tuple[float, float]  # runs scheduled in [start, end) are measured
    interval: tuple[float, float]  # throughput and CPU are counted inside it
    timeout_s: float  # a measured run running this long after its scheduled start is cut
    target_s: float  # the latency target (early stop)
    late_limit: int  # stop once this many measured runs exceed the target
    error_limit: int  # stop once this many measured runs failed or timed out
    tick_s: float = 0.1

    @property
    def measured_range(self) -> range:
        """The indices of the measured runs (the offsets are sorted)."""
        first = bisect.bisect_left(self.offsets, self.window[0])
        return range(first, bisect.bisect_left(self.offsets, self.window[1]))

    def measured(self, index: int) -> bool:
        return self.window[0] <= self.offsets[index] < self.window[1]

    @property
    def deadline_s(self) -> float:
        """When the level ends whatever happens: every measured run is due by then, and
        cut ``timeout_s`` after its start at the latest (plus a second of slack)."""
        return max(self.window[1], self.interval[1]) + self.timeout_s + 1.0


@dataclass
class Ended:
    """A run that returned (or raised)."""

    due: float  # scheduled start (loop time)
    started: float
    ended: float
    record: Any  # the engine's RunRecord (bulky fields dropped); None if run() raised
    error: str | None = None

    @property
    def latency_s(self) -> float:
        return self.ended - self.due


@dataclass
class Played:
    """What happened in one level (loop times; see ``OpenLoop``)."""

    t0: float
    ended: dict[int, Ended] = field(default_factory=dict)  # every run that returned
    timeouts: dict[int, float] = field(default_factory=dict)  # measured index → due
    cut: dict[int, float] = field(default_factory=dict)  # measured index → latency at stop
    not_run: int = 0  # measured runs due after an early stop
    lags: dict[int, float] = field(default_factory=dict)  # measured index → start − due
    ticks: list[tuple[float, float]] = field(default_factory=list)  # (loop time, CPU s)
    late: int = 0  # measured runs that ended over the target
    failures: int = 0  # measured runs that raised or ended with a status other than completed
    stopped: str | None = None
    left_running: int = 0
    elapsed_s: float = 0.0


def _slim(record: Any) -> Any:
    """The record without its bulky parts (request bodies, trace, debug text)."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        try:
            return dataclasses.replace(record, requests=[], trace=None, debug_output="")
        except TypeError:
            return record
    return record


class OpenLoop:
    """Plays a ``Schedule`` against ``run`` (one coroutine per run) on the running loop."""

    def __init__(self, run: Callable[[], Awaitable[Any]], schedule: Schedule):
        self.run = run
        self.schedule = schedule
        self._tasks: dict[int, asyncio.Task[None]] = {}  # running, by index
        self._stop = asyncio.Event()
        self._next = 0  # the next arrival to start
        self._measured = schedule.measured_range
        self._samples = 0  # CPU samples the interval takes (set by _sampler)

    async def _one(self, index: int, due: float, played: Played) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        measured = self.schedule.measured(index)
        if measured:
            played.lags[index] = started - due
        try:
            try:
                record, error = _slim(await self.run()), None
            except Exception as exc:  # an engine broke its "never raises" contract: a failure
                record, error = None, f"{exc!r}"[:500]
            run = played.ended[index] = Ended(due, started, loop.time(), record, error)
            if measured and index not in played.timeouts:
                played.late += run.latency_s > self.schedule.target_s
                played.failures += record is None or getattr(record, "status", None) != "completed"
        finally:
            self._tasks.pop(index, None)

    async def _arrivals(self, played: Played) -> None:
        loop = asyncio.get_running_loop()
        for index, offset in enumerate(self.schedule.offsets):
            due = played.t0 + offset
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if self._stop.is_set():
                return
            self._tasks[index] = loop.create_task(self._one(index, due, played))
            self._next = index + 1

    def _running_measured(self) -> list[int]:
        return [i for i in self._tasks if i in self._measured]

    def _overdue_unstarted(self, played: Played, now: float) -> int:
        """Measured runs due more than the target ago that the generator has not started
        yet (the loop is that far behind): certain to end over the target."""
        s, m = self.schedule, self._measured
        late_due = bisect.bisect_right(s.offsets, now - played.t0 - s.target_s)
        return max(0, min(late_due, m.stop) - max(self._next, m.start))

    def _check(self, played: Played, now: float) -> str | None:
        """Cut overdue measured runs; the reason to stop now (``""``: done), or None."""
        s = self.schedule
        running = self._running_measured()
        late = 0
        for index in running:
            due = played.t0 + s.offsets[index]
            age = now - due
            if age >= s.timeout_s:
                self._tasks[index].cancel()
                played.timeouts[index] = due
            elif age > s.target_s:
                late += 1
        late += played.late + len(played.timeouts) + self._overdue_unstarted(played, now)
        errors = played.failures + len(played.timeouts)
        if late >= s.late_limit:
            return "p95 over the target"
        if errors >= s.error_limit:
            return "errors"
        if now >= played.t0 + s.deadline_s:
            return "deadline"
        # the interval's last CPU sample is taken when the loop reaches it, maybe late
        over = now >= played.t0 + s.window[1] and len(played.ticks) >= self._samples
        started = self._next >= self._measured.stop
        if over and started and not any(i not in played.timeouts for i in running):
            return ""
        return None

    def _sampler(self, played: Played) -> list[asyncio.TimerHandle]:
        """CPU samples at the interval's start, every ``tick_s``, and at its end exactly."""
        loop = asyncio.get_running_loop()
        s = self.schedule
        start, end = played.t0 + s.interval[0], played.t0 + s.interval[1]
        marks = [start + k * s.tick_s for k in range(int((end - start) / s.tick_s) + 1)]
        if end - marks[-1] > 1e-6:
            marks.append(end)

        def sample() -> None:
            played.ticks.append((loop.time(), time.process_time()))

        self._samples = len(marks)
        return [loop.call_at(mark, sample) for mark in marks]

    async def play(self) -> Played:
        loop = asyncio.get_running_loop()
        s = self.schedule
        played = Played(t0=loop.time())
        arrivals = loop.create_task(self._arrivals(played))
        samples = self._sampler(played)
        while True:
            await asyncio.sleep(s.tick_s)
            reason = self._check(played, loop.time())
            if reason is not None:
                played.stopped = reason or None
                break
        self._stop.set()
        arrivals.cancel()
        for handle in samples:
            handle.cancel()
        now = loop.time()
        for index in self._running_measured():
            if index not in played.timeouts:
                played.cut[index] = now - (played.t0 + s.offsets[index])
        played.not_run = len(self._measured) - len(played.lags)
        pending = list(self._tasks.values())
        for task in pending:
            task.cancel()
        await asyncio.gather(arrivals, return_exceptions=True)
        if pending:
            _done, still = await asyncio.wait(pending, timeout=2.0)
            played.left_running = len(still)
        played.elapsed_s = loop.time() - played.t0
        return played


def summarize(played: Played, schedule: Schedule, classify: Callable[[Any], str]) -> dict[str, Any]:
    """The worker's account of one level (fields of ``LoadRow``, per process)."""
    s = schedule
    counts = dict.fromkeys(OUTCOMES, 0)
    latencies: list[float] = []
    outcome: dict[int, str] = {}
    for index, run in played.ended.items():
        outcome[index] = "failed" if run.record is None else classify(run.record)
    for index, run in played.ended.items():
        if s.measured(index) and index not in played.timeouts:
            counts[outcome[index]] += 1
            if outcome[index] == "ok":
                latencies.append(run.latency_s * 1000)
    latencies += [s.timeout_s * 1000] * len(played.timeouts)
    latencies += [age * 1000 for age in played.cut.values()]
    due = len(s.measured_range)
    # the throughput interval, as far as it was sampled: ok completions and CPU per slice
    ticks = played.ticks
    slices: list[tuple[float, int]] = []
    ok_ends = sorted(run.ended for i, run in played.ended.items() if outcome[i] == "ok")
    for (t_a, cpu_a), (t_b, cpu_b) in itertools.pairwise(ticks):
        done = bisect.bisect_right(ok_ends, t_b) - bisect.bisect_right(ok_ends, t_a)
        slices.append((round(cpu_b - cpu_a, 6), done))
    interval_s = ticks[-1][0] - ticks[0][0] if len(ticks) > 1 else 0.0
    lags = sorted(played.lags.values())
    return {
        "scheduled": due,
        "ok": counts["ok"],
        "wrong": counts["wrong"],
        "failed": counts["failed"],
        "timeouts": len(played.timeouts),
        "cut": len(played.cut),
        "not_run": played.not_run,
        "latencies_ms": [round(v, 3) for v in latencies],
        "lags_ms": [round(v * 1000, 3) for v in lags],
        "interval_s": interval_s,
        "completions": sum(n for _, n in slices),
        "cpu_s": sum(c for c, _ in slices),
        "cpu_slices": slices,
        "stopped": played.stopped,
        "left_running": played.left_running,
        "elapsed_s": played.elapsed_s,
    }


__all__ = ["OUTCOMES", "Ended", "OpenLoop", "Played", "Schedule", "summarize"]
