"""What every phase of a run is given (``PhaseContext``) and what the run reports (``Outcome``)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from bench.results.store import RunStore
from bench.runner.cache import ResultsCache
from bench.runner.plan import RunConfig
from bench.runner.progress import Progress
from bench.runner.workers import WorkerPool
from scenarios import Scenario


@dataclass
class Outcome:
    """What happened, for the command's exit code and its final words."""

    timed_runs: int = 0
    warmup_runs: int = 0
    crashed_runs: int = 0
    throughput_levels: int = 0
    crashed_levels: int = 0
    skipped_runs: int = 0
    reused_runs: int = 0  # outcome rows taken from the results cache (timings null)
    ttft_runs: int = 0  # timed runs of the TTFT phase
    crashed_ttft_runs: int = 0
    ttft_skipped: str | None = None  # why the TTFT phase did not run, when it was asked for
    load: Any = None  # the load phase's LoadOutcome, when it ran
    phase_s: dict[str, float] = field(default_factory=dict)  # phase → wall seconds (this session)
    messages: list[str] = field(default_factory=list)
    # environment → what meta.json records of it (bench.envs.Environment.meta), or
    # {"status": "error", "error": reason} when it could not be built
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # the results cache's hits and misses

    def add_counts(self, other: Outcome) -> None:
        """Add ``other``'s run and level counters to these (a concurrent lane's share)."""
        for f in fields(self):
            if f.type in ("int", int):
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class PhaseContext:
    """One run's configuration, scenarios, store, progress, workers and outcome."""

    config: RunConfig
    scenarios: dict[str, Scenario]
    store: RunStore
    progress: Progress
    workers: WorkerPool
    outcome: Outcome
    reference: str | None  # the scenario of each worker's cold first run
    # exact results of earlier runs (bench.runner.cache); off unless the run turns it on
    cache: ResultsCache = field(default_factory=lambda: ResultsCache(None, provenance=""))
