"""The parent side of a run: the phases in order, each in its own module (``bench.runner.phases``).

Import probes (``footprint``), the happy paths round by round (``suite``), TTFT (``ttft``),
throughput (``throughput``), the fault scenarios in concurrent lanes (``outcomes``), the
LangChain version matrix (``versions``), then the open-loop
load phase (``load``). Only this process writes the results files. Workers
(``bench.runner.run_worker``) stream one JSON line per run; each becomes a row at once
(flushed), so a crash of anything loses at most the run in flight. ``--resume`` retries
exactly the runs that have no row, or only a crashed one.

Each worker runs in its engine's environment (the registry's ``environment``, built once by
``bench.envs``): before the first phase, every environment the run needs is built or reused;
one that cannot be built skips its engines — their runs become error rows carrying the
reason (``termination: env_unavailable``) and the rest of the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.referee.server import start_server_process
from bench.results.store import RunStore
from bench.runner.cache import ResultsCache
from bench.runner.metadata import git_state
from bench.runner.phases import footprint, outcomes, suite, throughput, ttft, versions
from bench.runner.phases.context import Outcome, PhaseContext
from bench.runner.phases.load.phase import LoadPhase
from bench.runner.plan import RunConfig, pick_reference, ttft_scenario
from bench.runner.progress import NullProgress, Progress
from bench.runner.workers import WorkerPool
from scenarios import HandlerPolicy, Scenario

__all__ = ["Orchestrator", "Outcome"]


class Orchestrator:
    """Runs one RunConfig into one RunStore."""

    def __init__(
        self,
        config: RunConfig,
        scenarios: dict[str, Scenario],
        store: RunStore,
        progress: Progress | None = None,
        *,
        handlers: HandlerPolicy | None = None,
    ):
        self.config = config
        self.scenario_dir = (
            str(Path(config.scenario_dir).resolve()) if config.scenario_dir is not None else None
        )
        reference = pick_reference(config, scenarios)
        progress = progress or NullProgress()
        workers = WorkerPool(
            config.engines,
            store,
            progress,
            scenario_dir=self.scenario_dir,
            transport=config.transport,
            reference=reference,
            # the handlers the user allowed (the command checked them); workers get the same
            handler_args=(handlers or HandlerPolicy()).worker_args(),
        )
        cache = ResultsCache.for_run(config.cache, git_state()["sha"])
        self.ctx = PhaseContext(
            config, scenarios, store, progress, workers, Outcome(), reference, cache
        )
        self._servers: dict[str, Any] = {}

    def run(self) -> Outcome:
        ctx, config = self.ctx, self.config
        try:
            self._start_servers()
            ctx.outcome.messages += ctx.workers.build_environments()
            ctx.outcome.environments = ctx.workers.environments
            if config.footprint:
                self._timed("footprint", footprint.run)
            self._timed("suite", suite.run)
            if config.ttft:
                self._timed("ttft", ttft.run)
            if config.throughput and config.concurrency:
                self._timed("throughput", throughput.run)
            self._timed("outcomes", outcomes.run)  # in the suite's last workers
            ctx.workers.close_all()
            if config.versions:
                self._timed("versions", versions.run)
            if config.load:
                ctx.workers.close_all()
                self._timed("load", self._load)
        finally:
            ctx.outcome.cache = ctx.cache.summary()
            ctx.workers.close_all()
            for server in self._servers.values():
                server.stop()
            ctx.store.sync()
        return ctx.outcome

    def _timed(self, name: str, phase: Callable[[PhaseContext], None]) -> None:
        """Run one phase; its wall time goes to meta.json (``outcome.phase_s``)."""
        started = time.monotonic()
        try:
            phase(self.ctx)
        finally:
            spent = time.monotonic() - started
            phase_s = self.ctx.outcome.phase_s
            phase_s[name] = round(phase_s.get(name, 0.0) + spent, 1)

    def _load(self, ctx: PhaseContext) -> None:
        config = self.config
        ctx.outcome.load = LoadPhase(
            config,
            ctx.scenarios,
            ctx.store,
            ctx.progress,
            self.scenario_dir,
            python_of=ctx.workers.python_of,
            handler_args=ctx.workers.handler_args,
        ).run()

    def _profiles(self) -> list[str]:
        """The latency profiles the run's loopback mocks serve."""
        config = self.config
        needed = {"zero", *config.latencies}
        if config.throughput:
            needed |= {p.latency for p in config.throughput_profiles}
        if ttft_scenario(config, self.ctx.scenarios) is not None:
            needed.add(config.ttft_latency)
        return sorted(needed)

    def _start_servers(self) -> None:
        if self.config.transport != "loopback":
            return
        store = self.ctx.store
        store.logs.mkdir(parents=True, exist_ok=True)
        for latency in self._profiles():
            log = store.logs / f"mock.{latency}.log"
            server = start_server_process(self.scenario_dir, latency, log=log)
            self._servers[latency] = server
            self.ctx.workers.base_urls[latency] = server.base_url
            self.ctx.progress.message(f"loopback mock ({latency}) at {server.base_url}")
