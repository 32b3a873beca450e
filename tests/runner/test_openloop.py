"""The open-loop generator on fake runs: arrivals on schedule, latency from the scheduled start."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from bench.runner.phases.load.openloop import OpenLoop, Schedule, summarize

NEVER = 10**6  # an early-stop limit that is never reached


@dataclass(frozen=True)
class Record:
    status: str = "completed"


def status_of(record: Record) -> str:
    return "ok" if record.status == "completed" else "failed"


def schedule(offsets, window, **changes) -> Schedule:
    values = {
        "offsets": tuple(offsets),
        "window": window,
        "interval": window,
        "timeout_s": 5.0,
        "target_s": 5.0,
        "late_limit": NEVER,
        "error_limit": NEVER,
        "tick_s": 0.02,
    }
    values.update(changes)
    return Schedule(**values)


def play(run, s: Schedule):
    async def go():
        return await OpenLoop(run, s).play()

    started = time.monotonic()
    played = asyncio.run(go())
    assert time.monotonic() - started < 30  # bounded: only catches a hang
    return played


def test_a_slow_engine_accumulates_latency_instead_of_lowering_the_offered_rate():
    # 40 arrivals at 100/s; every run holds the event loop for 20 ms: one process can do 50/s
    offsets = [i * 0.01 for i in range(40)]

    async def hog() -> Record:
        time.sleep(0.02)  # blocks the loop, as CPU-bound framework code does
        await asyncio.sleep(0.01)
        return Record()

    s = schedule(offsets, (0.0, 0.4))
    played = play(hog, s)
    row = summarize(played, s, status_of)
    # every arrival was started: the schedule, not the engine, set the rate
    assert (row["scheduled"], row["ok"], row["not_run"], row["stopped"]) == (40, 40, 0, None)
    assert sorted(played.lags) == list(range(40))
    latencies = {i: played.ended[i].latency_s for i in range(40)}
    for i, latency in latencies.items():
        # run i cannot end before i + 1 runs have held the loop for 20 ms each: its latency,
        # from its scheduled start (i × 10 ms), grows with i — the queue shows
        assert latency >= 0.02 * (i + 1) - 0.01 * i - 0.002
        assert played.ended[i].started >= played.t0 + offsets[i] - 1e-3
    assert latencies[39] >= 0.41 - 0.002
    # and the latency sample is exactly these, in ms
    assert sorted(row["latencies_ms"]) == sorted(round(v * 1000, 3) for v in latencies.values())


def test_failed_runs_are_errors_not_fast_successes():
    async def refuse() -> Record:
        return Record(status="failed")

    s = schedule([i * 0.01 for i in range(20)], (0.0, 0.2))
    row = summarize(play(refuse, s), s, status_of)
    assert (row["ok"], row["failed"], row["wrong"]) == (0, 20, 0)
    assert row["latencies_ms"] == []  # a failure is never a latency of the sample
    assert row["completions"] == 0


def test_a_run_that_raises_counts_as_failed():
    async def broken() -> Record:
        raise RuntimeError("engine bug")

    s = schedule([0.0, 0.01], (0.0, 0.02))
    played = play(broken, s)
    assert [played.ended[i].error for i in (0, 1)] == ["RuntimeError('engine bug')"] * 2
    assert summarize(played, s, status_of)["failed"] == 2


def test_many_failures_stop_the_level_early():
    async def refuse() -> Record:
        await asyncio.sleep(0.005)
        return Record(status="error")

    s = schedule([i * 0.05 for i in range(40)], (0.0, 2.0), error_limit=3)
    played = play(refuse, s)
    row = summarize(played, s, status_of)
    assert row["stopped"] == "errors"
    assert row["failed"] >= 3 and row["not_run"] > 0
    assert row["failed"] + row["not_run"] + row["cut"] == 40


def test_hung_runs_are_cut_at_the_timeout_with_a_censored_latency():
    async def hang() -> Record:
        await asyncio.sleep(60)
        return Record()

    s = schedule([0.0, 0.01, 0.02, 0.5], (0.0, 0.1), timeout_s=0.2)
    played = play(hang, s)
    row = summarize(played, s, status_of)
    # the three measured runs time out; the unmeasured one is simply cancelled at the end
    assert (row["timeouts"], row["ok"], row["cut"], row["stopped"]) == (3, 0, 0, None)
    assert row["latencies_ms"] == [200.0, 200.0, 200.0]
    assert played.left_running == 0


def test_runs_over_the_target_stop_the_level_once_its_p95_is_certain():
    async def slow() -> Record:
        await asyncio.sleep(0.3)
        return Record()

    s = schedule([i * 0.02 for i in range(100)], (0.0, 2.0), target_s=0.1, late_limit=3)
    played = play(slow, s)
    row = summarize(played, s, status_of)
    assert row["stopped"] == "p95 over the target"
    assert row["not_run"] > 0 and row["cut"] > 0
    # cut runs are in the sample at their age when the level stopped (lower bounds)
    assert len(row["latencies_ms"]) == row["ok"] + row["cut"] + row["timeouts"]
    assert played.elapsed_s < 1.5


def test_throughput_and_cpu_are_counted_in_slices_of_the_interval():
    async def quick() -> Record:
        time.sleep(0.001)
        await asyncio.sleep(0.05)
        return Record()

    offsets = [i * 0.01 for i in range(60)]
    s = schedule(offsets, (0.1, 0.4), interval=(0.15, 0.45))
    played = play(quick, s)
    row = summarize(played, s, status_of)
    assert row["scheduled"] == 30 and row["ok"] == 30
    ends = [r.ended for r in played.ended.values()]
    first, last = played.ticks[0][0], played.ticks[-1][0]
    assert row["completions"] == sum(1 for t in ends if first < t <= last)
    assert row["completions"] == sum(n for _, n in row["cpu_slices"])
    assert row["cpu_s"] == sum(c for c, _ in row["cpu_slices"]) > 0
    assert row["interval_s"] == last - first
    assert all(first >= played.t0 + 0.15 - 1e-9 for first, _ in played.ticks)
