"""One load level's row from its processes' shares (bench.runner.phases.load.phase.aggregate)."""

from __future__ import annotations

import pytest

from bench.runner.phases.load.phase import aggregate


def part(cpu_s: float, interval_s: float, pid: int) -> dict:
    return {
        "scheduled": 10, "ok": 10, "wrong": 0, "failed": 0, "timeouts": 0, "cut": 0,
        "not_run": 0, "cpu_slices": [[cpu_s, 10]], "lags_ms": [1.0], "stopped": None,
        "interval_s": interval_s, "latencies_ms": [100.0] * 10, "completions": 10,
        "cpu_s": cpu_s, "peak_rss_mb": 50.0, "left_running": 0, "elapsed_s": 3.0, "pid": pid,
    }  # fmt: skip


def test_cores_used_counts_each_process_over_its_own_interval():
    # one process busy a full core for 1 s, the other a full core for 2 s: two cores in use,
    # not (1 + 2) CPU seconds over the shorter 1 s interval (three cores on a 2-core machine)
    row = aggregate([part(1.0, 1.0, 1), part(2.0, 2.0, 2)])
    assert row["cores_used"] == pytest.approx(2.0)
    assert row["cpu_s"] == pytest.approx(3.0) and row["interval_s"] == 1.0
    assert aggregate([part(0.5, 1.0, 1), part(0.0, 0.0, 2)])["cores_used"] == pytest.approx(0.5)
