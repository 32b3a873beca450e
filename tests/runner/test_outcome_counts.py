"""A concurrent lane's counters added to the run's (Outcome.add_counts)."""

from __future__ import annotations

from dataclasses import fields

from bench.runner.phases.context import Outcome


def test_every_counter_is_added_and_nothing_else_is_touched():
    counters = [f.name for f in fields(Outcome) if f.type in ("int", int)]
    assert {"timed_runs", "warmup_runs", "crashed_runs", "ttft_runs"} <= set(counters)
    run = Outcome(ttft_skipped="no TTFT runs asked for", phase_s={"suite": 1.0})
    lane = Outcome(**{name: i + 1 for i, name in enumerate(counters)}, messages=["lane"])
    run.add_counts(lane)
    run.add_counts(lane)
    assert [getattr(run, n) for n in counters] == [2 * (i + 1) for i in range(len(counters))]
    assert run.ttft_skipped == "no TTFT runs asked for" and run.phase_s == {"suite": 1.0}
    assert run.messages == []
