"""Concurrent lanes: a phase's per-engine work on a few threads, each driving one worker at
a time (the outcome phase: fault cells that mostly wait on deadlines; the TTFT phase: runs
that mostly wait on the scripted stream). Each lane gets its own ``Outcome`` (summed at the
end) and the run's progress display behind one lock."""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable, Sequence

from bench.runner.phases.context import Outcome, PhaseContext
from bench.runner.progress import Progress


class LaneProgress:
    """The run's progress display shared by the lanes: every call under one lock, and each
    lane's estimated seconds counted as 1/lanes of the phase's wall time."""

    def __init__(self, target: Progress, lanes: int):
        self._target, self._lanes, self._lock = target, lanes, threading.Lock()

    def phase(self, name: str, total_units: float, total_runs: int, unit: str = "runs") -> None:
        with self._lock:
            self._target.phase(name, total_units, total_runs, unit)

    def describe(self, text: str) -> None:
        with self._lock:
            self._target.describe(text)

    def advance(self, units: float, runs: int = 1) -> None:
        with self._lock:
            self._target.advance(units / self._lanes, runs)

    def message(self, text: str) -> None:
        with self._lock:
            self._target.message(text)

    def close(self) -> None:
        with self._lock:
            self._target.close()


def run_lanes(
    ctx: PhaseContext,
    engines: Sequence[str],
    lanes: int,
    work: Callable[[PhaseContext, str], None],
) -> None:
    """``work(lane_ctx, engine)`` for every engine, in this order, on ``lanes`` threads (each
    takes the next engine when it is done with one); the lanes' counts go to ``ctx.outcome``."""
    todo: queue.Queue[str] = queue.Queue()
    for engine in engines:
        todo.put(engine)
    lanes = max(1, min(lanes, len(engines)))
    shared = dataclasses.replace(ctx, progress=LaneProgress(ctx.progress, lanes))
    outcomes: list[Outcome] = []

    def lane() -> None:
        mine = dataclasses.replace(shared, outcome=Outcome())
        outcomes.append(mine.outcome)
        while True:
            try:
                engine = todo.get_nowait()
            except queue.Empty:
                return
            work(mine, engine)

    threads = [threading.Thread(target=lane, name=f"lane-{i}") for i in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for part in outcomes:
        ctx.outcome.add_counts(part)
    ctx.store.sync()
