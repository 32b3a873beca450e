"""The parent side of the open-loop load phase: the mock pool, its ceiling, the sweeps.

After the suite (and TTFT, throughput), for each load engine (``bench.runner.phases.load.plan``):

1. the mock runs on the load profile in ``max(load processes)`` processes sharing one
   loopback port (``bench.referee.pool``); a bare client first measures its ceiling
   (two ``kind: "mock"`` rows: JSON and streamed replies);
2. one fresh worker (``bench.runner.run_worker``, loopback transport) prepares the engine's
   agent and plays the one-process sweep, a level per offered rate, each one
   ``kind: "level"`` row of load.jsonl. Without ``load_rates`` (the default) the sweep is
   the search of ``loadplan.search``: the common rate first (its CPU per run calibrates the
   next rate), then a bracket and a bisection to ``loadplan.RESOLUTION``, both ends
   confirmed by a longer second trial (``trial: 1``). With ``load_rates`` it walks that
   grid from ``load_start_rate``, up while the engine sustains the rate, down while it
   does not (``loadplan.sweep``);
3. more workers join (as many as the machine has cores) for the multi-process sweep (by
   default only for the bare loop and the production pair, ``engine_processes``): the
   same search, coarser (``MULTI_RESOLUTION``), without the confirmations, its first guess
   at most the one-process capacity × the processes (or, on a grid, a walk from the first
   rate one process could not sustain); the arrivals are split over the processes as independent
   seeded Poisson streams, started together (a shared wall-clock start time).

Every level is bounded (its arrivals are counted before it starts, and it ends at the
latest ``timeout`` after its window), every sweep by the grid or ``SEARCH_MAX_LEVELS``,
the phase by ``load_budget_s``: engines left when it is spent are skipped, and the outcome
says so. A worker that dies costs its level (a ``crashed: true`` row) and ends that sweep.
``--resume`` replays the verdicts of the levels already measured and measures only the
missing ones.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.engines.base import RunContext
from bench.engines.raw import RawEngine
from bench.errors import WorkerError
from bench.referee import MockLLM
from bench.referee.pool import busiest, total
from bench.referee.transport import BASE_URL
from bench.results import metrics, stats
from bench.results.files import LOAD, LOAD_KEY, dumps_line
from bench.results.rows import LoadRow, key_of, latest
from bench.runner.metadata import machine_cores
from bench.runner.phases.load import plan as loadplan
from bench.runner.phases.load.nodes import NodeWorker, Placement
from bench.runner.plan import RunConfig, measured
from bench.runner.process import SPAWN_TIMEOUT_S
from bench.runner.progress import NullProgress, Progress
from scenarios import load_scenarios

PROBE_CONCURRENCY = 512  # the bare client's connections (enough to keep the pool busy)
TAIL_CHARS = 4000


def raw_requests(scenario_name: str, scenario_dir: str | None) -> list[dict[str, Any]]:
    """The request bodies the raw loop sends on one in-process run of the scenario: what the
    bare client of the mock's ceiling posts (the referee runs no engine itself)."""

    async def once() -> list[dict[str, Any]]:
        scenarios = load_scenarios(scenario_dir)
        mock = MockLLM(scenarios=scenarios, record=True)
        engine = RawEngine()
        ctx = RunContext(scenario=scenarios[scenario_name], mock=mock, base_url=BASE_URL)
        record = await engine.run(await engine.prepare(ctx))
        await engine.aclose()
        if record.status != "completed":
            raise RuntimeError(f"the raw loop did not complete {scenario_name}: {record.error}")
        return [dict(request.body) for request in mock.requests]

    return asyncio.run(once())  # once per load phase, outside any timed region


@dataclass
class LoadOutcome:
    """What the load phase did, for meta.json's outcome and the final words."""

    levels: int = 0
    crashed_levels: int = 0
    skipped_engines: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the phase did not run at all
    elapsed_s: float = 0.0


def load_engines(config: RunConfig) -> tuple[str, ...]:
    """The engines of the load phase: ``load_engines``, or the default set of the run's."""
    if config.load_engines is not None:
        return tuple(config.load_engines)
    return loadplan.default_load_engines(measured(config.engines))


def load_processes(config: RunConfig, cores: int | None = None) -> tuple[int, ...]:
    """``load_processes``, else 1 and one per core (this machine's, or ``cores``: a spread
    load phase's generator nodes')."""
    return tuple(config.load_processes or loadplan.default_processes(cores))


def engine_processes(config: RunConfig, engine: str, cores: int | None = None) -> tuple[int, ...]:
    """The process counts of ``engine``'s sweeps: all of ``load_processes`` when they or the
    engines were given, else one process, and more only for ``default_multi_engines``."""
    processes = load_processes(config, cores)
    if config.load_processes is not None or config.load_engines is not None:
        return processes
    if engine in loadplan.default_multi_engines(measured(config.engines)):
        return processes
    return processes[:1]


def aggregate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One level's row from each process's share (sums, union of latencies, the worst)."""
    total = {
        name: sum(int(p[name]) for p in parts)
        for name in ("scheduled", "ok", "wrong", "failed", "timeouts", "cut", "not_run")
    }
    slices: list[list[float]] = []
    for part in parts:
        for i, (cpu, done) in enumerate(part["cpu_slices"]):
            while len(slices) <= i:
                slices.append([0.0, 0])
            slices[i][0] += cpu
            slices[i][1] += done
    lags = [v for p in parts for v in p["lags_ms"]]
    reasons = [p["stopped"] for p in parts if p["stopped"]]
    intervals = [p["interval_s"] for p in parts if p["interval_s"] > 0]
    return {
        **total,
        "latencies_ms": [v for p in parts for v in p["latencies_ms"]],
        "start_lag_p99_ms": stats.number(stats.percentile(lags, 99)),
        "interval_s": min(intervals) if intervals else 0.0,
        "completions": sum(int(p["completions"]) for p in parts),
        "cpu_s": sum(float(p["cpu_s"]) for p in parts),
        # each process's CPU over its own interval, summed (the shortest interval would
        # count the others' CPU over less time than they ran: 2.4-2.7 cores on 2)
        "cores_used": sum(
            float(p["cpu_s"]) / float(p["interval_s"]) for p in parts if p["interval_s"] > 0
        ),
        "cpu_slices": [[round(c, 6), int(n)] for c, n in slices],
        "peak_rss_mb": max((p["peak_rss_mb"] for p in parts if p["peak_rss_mb"]), default=None),
        "stopped": reasons[0] if reasons else None,
        "left_running": sum(int(p["left_running"]) for p in parts),
        "elapsed_s": max(float(p["elapsed_s"]) for p in parts),
        "pids": [int(p["pid"]) for p in parts],
    }


class LoadPhase:
    """Runs the load phase of one RunConfig into the store (see the module docstring)."""

    def __init__(
        self,
        config: RunConfig,
        scenarios: dict[str, Any],
        store: Any,
        progress: Progress | None = None,
        scenario_dir: str | None = None,
        *,
        python_of: Callable[[str], str | None] | None = None,
        handler_args: list[str] | None = None,
        placement: Placement | None = None,
    ):
        self.config = config
        # where the mock and the load workers run (None: all on this host, as always)
        self.placement = placement
        # engine -> the interpreter of its environment (None: the environment is unavailable)
        self.python_of = python_of
        self.handler_args = handler_args
        self.scenarios = scenarios
        self.store = store
        self.progress = progress or NullProgress()
        self.scenario_dir = scenario_dir
        self.outcome = LoadOutcome()
        self.engines = load_engines(config)
        self.processes = load_processes(config, placement.cores if placement else None)
        self.grid = tuple(sorted(set(config.load_rates)))
        self._mock_url: str | None = None
        self._mock_processes = 0
        self._spawns = 0
        self._started = 0.0
        self._done = {
            key_of(row, LOAD_KEY): row
            for row in latest(store.rows(LOAD), LOAD_KEY)
            if not row.crashed
        }

    # -- the phase ----------------------------------------------------------------------

    def skip_reason(self) -> str | None:
        config = self.config
        if not self.engines:
            return "no load engine among the run's engines"
        if config.load_scenario not in self.scenarios:
            where = config.scenario_dir or "scenarios/"
            return f"no scenario {config.load_scenario!r} in {where}"
        return None

    def run(self) -> LoadOutcome:
        self.outcome.skipped = self.skip_reason()
        if self.outcome.skipped:
            self.progress.message(f"load phase skipped: {self.outcome.skipped}")
            return self.outcome
        config = self.config
        scenario = self.scenarios[config.load_scenario]
        self.scripted_ms = loadplan.scripted_latency_ms(scenario, config.load_latency)
        self.target_ms = loadplan.latency_target_ms(self.scripted_ms, config.load_target_factor)
        self._started = time.monotonic()
        self.progress.phase(
            "load", self._estimate_s(), sum(len(self._processes(e)) for e in self.engines), "sweeps"
        )
        placement = self.placement = self.placement or Placement.local(self.store.logs)
        try:
            self._mock_url, pids = placement.mock.call(
                "start_pool",
                max(self.processes),
                config.load_latency,
                self.scenario_dir,
                placement.mock_host,
            )
            self._mock_processes = len(pids)
            placement.compare_clocks()
            where = ""
            if placement.spread:
                where = f" on {placement.mock.host}; load workers on " + ", ".join(
                    g.host for g in placement.generators
                )
            self.progress.message(
                f"load: {self._mock_processes} mock process(es) ({config.load_latency}) at "
                f"{self._mock_url}{where}; target p95 {self.target_ms:,.0f} ms "
                f"(scripted {self.scripted_ms:,.0f} ms × {config.load_target_factor:g})"
            )
            self._probe_mock()
            for engine in self.engines:
                if time.monotonic() - self._started > config.load_budget_s:
                    self.outcome.skipped_engines.append(engine)
                    continue
                self._engine(engine)
            if self.outcome.skipped_engines:
                self.progress.message(
                    f"load: time budget of {config.load_budget_s:g} s spent; not measured: "
                    + ", ".join(self.outcome.skipped_engines)
                )
        finally:
            placement.shutdown()
            self.outcome.elapsed_s = time.monotonic() - self._started
            self.store.sync()
        return self.outcome

    @property
    def searching(self) -> bool:
        """No grid given: each sweep is ``loadplan.search``."""
        return not self.grid

    def _estimate_s(self) -> float:
        """A rough duration for the progress bar: per sweep three levels on a grid, five
        (one process) or four searched, and a spawn."""
        rate = self.grid[len(self.grid) // 2] if self.grid else loadplan.COMMON_RATE * 5
        level = self._level(rate, 1)
        total = 6.0
        for engine in self.engines:
            per_sweep = [
                (6 if p == 1 else 4) if self.searching else 3 for p in self._processes(engine)
            ]
            total += sum(n * level.est_s + 2.0 for n in per_sweep)
        return total

    def _processes(self, engine: str) -> tuple[int, ...]:
        return engine_processes(self.config, engine, self._cores)

    # -- the mock's ceiling -------------------------------------------------------------

    def _probe_mock(self) -> None:
        assert self.placement is not None
        config = self.config
        n = self._mock_processes

        def ids(stream: bool) -> dict[str, Any]:
            return {
                "kind": "mock",
                "engine": "bare-http-client",
                "scenario": config.load_scenario,
                "latency": config.load_latency,
                "transport": "loopback",
                "processes": n,
                "rate": None,
                "stream": stream,
            }

        if all(tuple(ids(s)[k] for k in LOAD_KEY) in self._done for s in (False, True)):
            return
        self.progress.describe("the mock's ceiling (a bare client)")
        try:
            requests = raw_requests(config.load_scenario, self.scenario_dir)
            results = self.placement.mock.call(
                "probe_pool", requests, PROBE_CONCURRENCY, config.load_probe_s
            )
        except Exception as exc:
            self.progress.message(f"load: the mock probe failed: {exc}")
            for stream in (False, True):
                self.store.append(
                    LOAD, {**ids(stream), "crashed": True, "error": str(exc)[-TAIL_CHARS:]}
                )
            self.store.sync()
            return
        for result in results:
            self.store.append(
                LOAD,
                {
                    **ids(result.stream),
                    "concurrency": result.concurrency,
                    "requests": result.requests,
                    "requests_per_s": result.requests_per_s,
                    "mock_cpu_ms_per_request": result.mock_cpu_ms_per_request,
                    "client_cpu_per_s": result.client_cpu_s / result.elapsed_s,
                    "failed": result.errors,
                    "elapsed_s": result.elapsed_s,
                    "mock_processes": n,
                    **self._where(),
                    "ended_at": time.time(),
                },
            )
        self.store.sync()

    # -- one engine ---------------------------------------------------------------------

    def _python(self, engine: str) -> str:
        if self.python_of is None:
            return sys.executable
        python = self.python_of(engine)
        if python is None:
            raise WorkerError(f"{engine}'s environment is unavailable")
        return python

    def _spawn(self, engine: str, count: int, first: int = 0) -> list[Any]:
        """``count`` fresh workers of ``engine`` on the load mock, prepared and warmed up:
        processes ``first`` … of the level, each on its generator node."""
        assert self.placement is not None and self._mock_url is not None
        workers: list[Any] = []
        options = {
            "scenario_dir": self.scenario_dir,
            "transport": "loopback",
            "base_urls": {self.config.load_latency: self._mock_url},
            "reference": None,
            "handler_args": self.handler_args,
            "python": self._python(engine),
        }
        try:
            for process in range(first, first + count):
                self._spawns += 1
                _index, node = self.placement.generator(process)
                pid = node.call("spawn", engine, f"{engine}.load.{self._spawns}.log", options)
                workers.append(NodeWorker(node, pid))
            for worker in workers:
                message = worker.receive(SPAWN_TIMEOUT_S)
                if message["type"] != "ready":
                    raise WorkerError(f"worker {worker.pid} said {message['type']!r}")
            for worker in workers:
                worker.send(
                    {
                        "op": "load_prepare",
                        "scenario": self.config.load_scenario,
                        "latency": self.config.load_latency,
                        # the ramp warms the agent up (--quick has none: a smoke test)
                        "warmup": 0,
                    }
                )
            for worker in workers:
                message = worker.receive(SPAWN_TIMEOUT_S)
                if message["type"] != "load_ready":
                    raise WorkerError(f"worker {worker.pid} said {message['type']!r}")
        except WorkerError:
            for worker in workers:
                worker.kill()
            raise
        return workers

    def _engine(self, engine: str) -> None:
        """The engine's sweeps: one process, then more (workers start when first needed)."""
        workers: list[Any] = []

        def measure(rate: float, processes: int, trial: int = 0) -> metrics.LoadLevel | None:
            if len(workers) < processes:
                try:
                    workers.extend(self._spawn(engine, processes - len(workers), len(workers)))
                except WorkerError as exc:
                    self._lost(engine, processes, rate, f"workers could not start: {exc}")
                    return None
            judged = self._measure(engine, processes, rate, workers[:processes], trial)
            if judged is None:  # a worker died: the others go too
                workers.clear()
            return judged

        one_process: dict[float, bool] = {}
        searched: dict[float, loadplan.Trial] = {}
        try:
            for processes in self._processes(engine):
                self.progress.describe(f"{engine} · {processes} process(es)")
                if self.searching:
                    found = self._search(engine, processes, measure, searched)
                    if processes == 1:
                        searched = found
                else:
                    results = self._sweep(engine, processes, measure, one_process)
                    if processes == 1:
                        one_process = results
                self.progress.advance(0.0, 1)
        finally:
            for worker in workers:
                worker.close()

    def _sweep(
        self,
        engine: str,
        processes: int,
        measure: Callable[..., metrics.LoadLevel | None],
        one_process: dict[float, bool],
    ) -> dict[float, bool]:
        """A walk over the explicit grid (``loadplan.sweep``)."""
        start = self.config.load_start_rate
        if processes > 1 and one_process:
            start = loadplan.sweep_start(self.grid, start, one_process)
        start = min(self.grid, key=lambda r: abs(r - start))

        def verdict(rate: float) -> bool | None:
            judged = measure(rate, processes)
            return None if judged is None else judged.sustained

        known = {rate: t.sustained for rate, t in self._known(engine, processes).items()}
        return loadplan.sweep(self.grid, start, verdict, known)

    def search_ceiling(self, processes: int) -> float:
        """The highest rate the search offers ``processes``: ``SEARCH_CEILING``, and 90 %
        of what a confirmation's arrivals (``load_max_arrivals`` per process) can hold."""
        scripted_s = self.scripted_ms / 1000
        config = self.config
        target_s = scripted_s * config.load_target_factor
        duration = (
            config.load_ramp * scripted_s
            + config.load_window_s * loadplan.CONFIRM_WINDOW
            + max(scripted_s, config.load_timeout_factor * target_s)
        )
        held = 0.9 * processes * config.load_max_arrivals / duration
        return loadplan.nice_rate(min(loadplan.SEARCH_CEILING, held))

    def _search(
        self,
        engine: str,
        processes: int,
        measure: Callable[..., metrics.LoadLevel | None],
        one_process: Mapping[float, loadplan.Trial] | None = None,
    ) -> dict[float, loadplan.Trial]:
        """The default sweep (``loadplan.search``): one process confirms the bracket's ends;
        more processes do not, and start from the one-process capacity × their count (the
        phase's time budget)."""
        prior = None
        if processes > 1 and one_process:
            lo, _hi = loadplan.bracket(one_process)
            if lo is not None:
                prior = lo * min(processes, self._cores)

        def trial(step: loadplan.Step) -> loadplan.Trial | None:
            judged = measure(step.rate, processes, 1 if step.confirm else 0)
            return None if judged is None else _trial(judged, step.confirm)

        return loadplan.search(
            trial,
            self._known(engine, processes),
            # CPU per run is compared at the common rate in one process; more processes
            # start at the one-process capacity × their count instead (the phase's budget)
            common=None if prior is not None else loadplan.COMMON_RATE,
            cores=float(min(processes, self._cores)),
            confirm=processes == 1,
            resolution=loadplan.RESOLUTION if processes == 1 else loadplan.MULTI_RESOLUTION,
            max_levels=loadplan.SEARCH_MAX_LEVELS if processes == 1 else loadplan.MULTI_MAX_LEVELS,
            prior=prior,
            ceiling=self.search_ceiling(processes),
        )

    def _known(self, engine: str, processes: int) -> dict[float, loadplan.Trial]:
        """The levels of this sweep already in load.jsonl (a resumed run), each rate's
        latest: a confirmation replaces its first trial."""
        out = {}
        for key, row in self._done.items():
            if key[0] == "level" and key[1] == engine and key[5] == processes:
                judged = metrics.load_level(row, seed=self.config.seed)
                out[float(row.rate)] = _trial(judged, bool(row.trial))
        return out

    # -- one level ----------------------------------------------------------------------

    def _level(self, rate: float, processes: int, trial: int = 0) -> loadplan.Level:
        config = self.config
        return loadplan.level_plan(
            rate,
            processes,
            seed=config.seed,
            scripted_ms=self.scripted_ms,
            target_factor=config.load_target_factor,
            window_s=config.load_window_s,
            min_runs=config.load_min_runs,
            ramp=config.load_ramp,
            timeout_factor=config.load_timeout_factor,
            error_budget=metrics.LOAD_ERROR_BUDGET,
            max_arrivals=config.load_max_arrivals,
            trial=trial,
        )

    def _ids(self, engine: str, processes: int, rate: float) -> dict[str, Any]:
        return {
            "kind": "level",
            "engine": engine,
            "scenario": self.config.load_scenario,
            "latency": self.config.load_latency,
            "transport": "loopback",
            "processes": processes,
            "rate": float(rate),
            "stream": None,
        }

    def _measure(
        self, engine: str, processes: int, rate: float, workers: list[Any], trial: int = 0
    ) -> metrics.LoadLevel | None:
        """One level into load.jsonl, judged (None: lost to a worker crash)."""
        placement = self.placement
        assert placement is not None
        level = self._level(rate, processes, trial)
        ids = self._ids(engine, processes, rate)
        again = " (confirming)" if trial else ""
        self.progress.describe(f"{engine} · {processes} process(es) · {rate:g} runs/s{again}")
        # one start time for every process, in each node's own clock
        start_at = time.time() + placement.lead_s
        nodes = [placement.generator(i) for i in range(processes)]
        hosts = placement.hosts()
        cpu_before, wall = placement.mock.call("pool_cpu_s"), time.monotonic()
        host_before = sum(h.call("busy_s") for h in hosts)
        engines_before = self._engines_cpu_s(workers)
        try:
            for worker, schedule, (index, _node) in zip(
                workers, level.schedules, nodes, strict=True
            ):
                worker.send(
                    {
                        "op": "load",
                        "scenario": self.config.load_scenario,
                        "latency": self.config.load_latency,
                        "start_at": start_at + placement.clock_offsets_s.get(index, 0.0),
                        "schedule": loadplan.schedule_dict(schedule),
                    }
                )
            limit = 60.0 + max(s.deadline_s for s in level.schedules) * 2
            parts = []
            for worker in workers:
                message = worker.receive(limit)
                if message["type"] != "load":
                    raise WorkerError(f"worker {worker.pid} said {message['type']!r}")
                parts.append(message["row"])
        except WorkerError as exc:
            tails = "\n".join(w.stderr_tail() for w in workers)
            self._lost(engine, processes, rate, f"{exc}\n{tails}".strip())
            for worker in workers:
                worker.kill()
            return None
        elapsed, cpu_after = time.monotonic() - wall, placement.mock.call("pool_cpu_s")
        host_after = sum(h.call("busy_s") for h in hosts)
        engines_after = self._engines_cpu_s(workers)
        self.progress.advance(level.est_s, 0)
        row = {
            **ids,
            **aggregate(parts),
            "seed": self.config.seed,
            "trial": trial,
            "scripted_ms": self.scripted_ms,
            "target_ms": self.target_ms,
            "ramp_s": level.ramp_s,
            "window_s": level.window_s,
            "timeout_s": level.timeout_s,
            "mock_processes": self._mock_processes,
            "mock_cpu_per_s": busiest(cpu_before, cpu_after, elapsed),
            "mock_cpu_total_per_s": total(cpu_before, cpu_after, elapsed),
            "host_cpu_per_s": (host_after - host_before) / elapsed,
            "engine_cpu_total_per_s": (engines_after - engines_before) / elapsed,
            **self._where(processes),
            "ended_at": time.time(),
        }
        self.store.append(LOAD, row)
        self.store.sync()
        self.outcome.levels += 1
        typed = LoadRow.model_validate_json(dumps_line(row))  # as the file will read
        judged = metrics.load_level(typed, seed=self.config.seed)
        verdict = "sustained" if judged.sustained else "not sustained: " + "; ".join(judged.why_not)
        self.progress.message(
            f"load: {engine} × {processes} at {rate:g} runs/s{again} — p95 "
            f"{judged.p95.point:,.0f} ms, achieved {judged.achieved_rate:,.1f} runs/s, "
            f"{judged.errors + judged.timeouts} bad of {judged.scheduled}: {verdict}"
        )
        return judged

    @property
    def _cores(self) -> int:
        """The cores the load workers share: this machine's, or the generator nodes'."""
        return self.placement.cores if self.placement is not None else machine_cores()

    def _engines_cpu_s(self, workers: list[NodeWorker]) -> float:
        """The load workers' CPU seconds so far, read on each one's node."""
        by_node: dict[int, tuple[Any, list[int]]] = {}
        for worker in workers:
            by_node.setdefault(id(worker.node), (worker.node, []))[1].append(worker.pid)
        return sum(float(node.call("cpu_s", pids)) for node, pids in by_node.values())

    def _where(self, processes: int | None = None) -> dict[str, Any]:
        """A spread load phase's placement, for its rows (one host: nothing)."""
        placement = self.placement
        if placement is None or not placement.spread:
            return {}
        if processes is None:
            return {"mock_host": placement.mock.host}
        nodes = [placement.generator(i) for i in range(processes)]
        return {
            "mock_host": placement.mock.host,
            "generator_hosts": [node.host for _, node in nodes],
            "clock_offsets_ms": [
                round(placement.clock_offsets_s.get(index, 0.0) * 1000, 3) for index, _ in nodes
            ],
        }

    def _lost(self, engine: str, processes: int, rate: float, reason: str) -> None:
        self.store.append(
            LOAD,
            {**self._ids(engine, processes, rate), "crashed": True, "error": reason[-TAIL_CHARS:]},
        )
        self.store.sync()
        self.outcome.crashed_levels += 1
        self.progress.message(f"load: {engine} × {processes} at {rate:g} runs/s lost: {reason}")


def _trial(judged: metrics.LoadLevel, confirmed: bool) -> loadplan.Trial:
    cpu = judged.cpu_ms_per_run.point
    return loadplan.Trial(
        judged.rate, judged.sustained, confirmed, cpu if math.isfinite(cpu) else None
    )


__all__ = ["LoadOutcome", "LoadPhase", "aggregate", "load_engines", "load_processes"]
