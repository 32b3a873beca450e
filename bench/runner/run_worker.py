"""``python -m bench.runner.run_worker --engine NAME``: measures one engine, in this fresh process.

One worker measures one engine for one round. It imports the harness, then the engine
(timed: the engine's import cost on top of the harness), makes one cold run of the
reference scenario (its peak RSS is the engine's footprint), says ``ready``, and then
obeys commands until told to exit. Everything runs on **one event loop** created here;
``asyncio.run`` is never called per run.

Protocol — newline-delimited JSON. Commands arrive on stdin::

    {"op": "batch", "scenario": S, "latency": L, "warmup": W, "repeats": [i, ...],
     "stream_tokens": false}       true: the TTFT phase (RunContext.stream_tokens)
    {"op": "throughput", "scenario": S, "latency": L, "concurrency": C,
     "window_s": T, "min_runs": N, "warmup_runs": K}
    {"op": "load_prepare", "scenario": S, "latency": L, "warmup": K}
    {"op": "load", "scenario": S, "latency": L, "start_at": UNIX_TIME, "schedule": {...}}
    {"op": "exit"}

Messages leave on the *original* stdout (fd 1 is then pointed at stderr, so whatever an
engine prints cannot corrupt the stream)::

    {"type": "ready", "footprint": {...}}
    {"type": "run", "phase": "warmup"|"timed", "index": i, "row": {...}}   one per run
    {"type": "batch_done"}
    {"type": "throughput", "row": {...}}
    {"type": "load_ready"}
    {"type": "load", "row": {...}}          one process's share of a level (bench.runner.phases.load.openloop)
    {"type": "fatal", "error": "..."}                                      then exit 1

Memory: once ready, the worker caps its own address space (``RLIMIT_AS``) at its size then
plus ``SCHEDBENCH_WORKER_MEMORY_MB`` (default 4096, at most a quarter of the machine's
memory). A run that needs more gets a ``MemoryError`` instead of taking the machine down,
and its row is an error with termination ``memory_limit`` (also when a tool's MemoryError was
swallowed by the engine); an allocation that kills the process becomes the crash rows of a
lost worker, as any crash does.

GC: left enabled during runs (allocation-heavy frameworks pay for their collections, as
they would in a service). Before each batch's timed runs the young generations are collected
(``gc.collect(1)``: what the warm-up and earlier batches left), so that garbage is not charged
to the next run; the old generation is left to the interpreter's own schedule, as in a
service (a full collection walks the whole heap, ~0.1 s with LangChain loaded: once per
batch it was a fifth of the suite's wall time). The collections that happened inside each
run are counted (``gc_collections``).
"""

from __future__ import annotations

# ruff: noqa: E402 - the waits accounting is installed before the imports below
# -- first of all: sleeps a run chooses (retry backoff) are recorded as waits, not overhead;
# installed before anything binds asyncio.sleep / time.sleep (bench.engines.kit.waits)
from bench.engines.kit import waits as _waits

_waits.install()

# -- the harness: imported before the engine, so that its cost is the engine's baseline --
import argparse
import asyncio
import gc
import json
import os
import resource
import sys
import time
import traceback
from collections import Counter
from typing import Any

from bench.engines.base import RunContext, RunRecord
from bench.engines.kit.runlog import set_ordinal
from bench.engines.kit.tools import allow_handlers
from bench.engines.kit.ttft import scripted_floor_ms
from bench.engines.plugins import create_engine
from bench.referee import LatencyProfile, MockLLM
from bench.referee.tokens import request_tokens
from bench.referee.transport import BASE_URL
from bench.results.rows import RunMeasurement
from bench.runner.channel import Channel
from bench.runner.measured import MAX_ERROR_CHARS, error_row, record_row, truncate
from bench.runner.offline import offline_env
from bench.runner.phases.load.session import LoadSession
from scenarios import HandlerPolicy, Scenario, load_scenarios

MEMORY_ENV = "SCHEDBENCH_WORKER_MEMORY_MB"
DEFAULT_MEMORY_MB = 4096


def rss_mb() -> float:
    """Current resident set size of this process, in MiB."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (ru_maxrss is KiB on Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def _vm_size_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_budget_mb() -> int:
    """What a worker may grow by: ``SCHEDBENCH_WORKER_MEMORY_MB``, else 4096 MiB or a quarter
    of the machine's memory, whichever is less."""
    value = os.environ.get(MEMORY_ENV, "").strip()
    if value:
        try:
            return max(int(value), 1)
        except ValueError:
            raise SystemExit(f"{MEMORY_ENV}: expected a number of MiB, not {value!r}") from None
    try:
        total_mb = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    except (OSError, ValueError):
        return DEFAULT_MEMORY_MB
    return min(DEFAULT_MEMORY_MB, max(total_mb // 4, 256))


def limit_memory(budget_mb: int) -> dict[str, Any]:
    """Cap this process's address space at its current size + ``budget_mb`` (RLIMIT_AS)."""
    size = _vm_size_bytes()
    if size is None:
        return {"memory_cap_mb": None}
    limit = size + budget_mb * 2**20
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return {"memory_cap_mb": budget_mb, "address_space_limit_mb": round(limit / 2**20)}


def memory_error_row(budget_mb: int | None, where: str) -> RunMeasurement:
    """A run stopped by the worker's memory cap."""
    gc.collect()
    return error_row(
        f"MemoryError in {where}: the run needed more than the worker's memory cap "
        f"({budget_mb} MiB above its size when ready; {MEMORY_ENV} sets it)",
        termination="memory_limit",
    )


def _tool_ran_out_of_memory(record: RunRecord) -> bool:
    return any((t.error or "").startswith("MemoryError") for t in record.tools or ())


YOUNG_GENERATIONS = 1  # gc.collect(1): generations 0 and 1, not the long-lived objects


def gc_collections() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


def _percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"latency_p50_ms": None, "latency_p95_ms": None, "latency_p99_ms": None}
    ordered = sorted(values)

    def pick(q: float) -> float:  # linear interpolation, as numpy's default
        pos = (len(ordered) - 1) * q
        low = int(pos)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)

    return {
        "latency_p50_ms": pick(0.50),
        "latency_p95_ms": pick(0.95),
        "latency_p99_ms": pick(0.99),
    }


class Worker:
    """Measures one engine: batches of runs and throughput windows, on one event loop."""

    def __init__(
        self,
        engine_name: str,
        engine: Any,
        scenarios: dict[str, Scenario],
        transport: str,
        base_urls: dict[str, str],
        channel: Channel,
    ):
        self.engine_name = engine_name
        self.engine = engine
        self.scenarios = scenarios
        self.transport = transport
        self.base_urls = base_urls
        self.channel = channel
        self._mocks: dict[str, MockLLM] = {}
        self.memory_budget_mb: int | None = None  # set when the cap is in force
        self.load = LoadSession(engine_name, engine, scenarios, self.context)

    # -- plumbing ------------------------------------------------------------------------

    def send_run(self, phase: str, index: int, row: RunMeasurement) -> None:
        """One run's measurement, the fields it was built from (``exclude_unset``)."""
        fields = row.model_dump(mode="json", exclude_unset=True)
        self.channel.send({"type": "run", "phase": phase, "index": index, "row": fields})

    def mock(self, latency: str) -> MockLLM:
        mock = self._mocks.get(latency)
        if mock is None:
            mock = self._mocks[latency] = MockLLM(
                scenarios=self.scenarios, latency=LatencyProfile.named(latency)
            )
        return mock

    def context(self, scenario: Scenario, latency: str, stream_tokens: bool = False) -> RunContext:
        """What the engine gets: the mock (or its URL), its latency profile, the run deadline."""
        common: dict[str, Any] = {
            "scenario": scenario,
            "latency": LatencyProfile.named(latency),
            "run_timeout_s": scenario.limits.run_timeout_s,
            "stream_tokens": stream_tokens,
        }
        if self.transport == "inprocess":
            return RunContext(
                mock=self.mock(latency), base_url=BASE_URL, transport="inprocess", **common
            )
        return RunContext(
            mock=None, base_url=self.base_urls[latency], transport="loopback", **common
        )

    def reset_mock(self, scenario: Scenario, latency: str) -> None:
        """Forget recorded requests and fault counters, so every run sees the same script."""
        if self.transport == "inprocess":
            self.mock(latency).reset()
        elif any(turn.fault is not None for turn in scenario.script):
            _post_reset(self.base_urls[latency])

    def referee_time(self, latency: str) -> tuple[float, float] | None:
        """The in-process mock's (wall, CPU) ms since its last reset (None over loopback)."""
        if self.transport != "inprocess":
            return None
        mock = self.mock(latency)
        return mock.handler_ms, mock.handler_cpu_ms

    async def timed_run(self, prepared: Any) -> tuple[RunRecord, float, int]:
        collections = gc_collections()
        start = time.perf_counter()
        record = await self.engine.run(prepared)
        outer_ms = (time.perf_counter() - start) * 1000
        return record, outer_ms, gc_collections() - collections

    # -- commands ------------------------------------------------------------------------

    async def first_run(self, scenario_name: str) -> dict[str, Any]:
        """The cold first run of the reference scenario (footprint); not a measurement."""
        scenario = self.scenarios[scenario_name]
        self.reset_mock(scenario, "zero")
        try:
            prepared = await self.engine.prepare(self.context(scenario, "zero"))
            record, outer_ms, _ = await self.timed_run(prepared)
        except Exception as exc:
            return {"first_run_status": "error", "first_run_error": repr(exc)[:MAX_ERROR_CHARS]}
        return {
            "first_run_ms": outer_ms,
            "first_run_status": record.status,
            "first_run_error": truncate(record.error, MAX_ERROR_CHARS),
        }

    async def batch(self, command: dict[str, Any]) -> None:
        scenario = self.scenarios[command["scenario"]]
        latency = command["latency"]
        warmup = int(command["warmup"])
        repeats = list(command["repeats"])
        stream_tokens = bool(command.get("stream_tokens"))
        try:
            self.reset_mock(scenario, latency)
            prepared = await self.engine.prepare(self.context(scenario, latency, stream_tokens))
            floor_ms = (
                scripted_floor_ms(scenario, LatencyProfile.named(latency))
                if stream_tokens
                else None
            )
        except Exception as exc:
            if isinstance(exc, MemoryError):
                row = memory_error_row(self.memory_budget_mb, "prepare")
            else:
                row = error_row("prepare failed: " + traceback.format_exc(limit=5))
            for index in repeats:
                self.send_run("timed", index, row)
            return
        plan = [("warmup", i) for i in range(warmup)] + [("timed", i) for i in repeats]
        for n, (phase, index) in enumerate(plan):
            if n == warmup:
                gc.collect(YOUNG_GENERATIONS)
            self.reset_mock(scenario, latency)
            # the n-th timed run of a cell draws its tools' failures (fail_rate) alike in
            # every engine and round; warm-ups draw apart from every timed run
            set_ordinal(index if phase == "timed" else -1 - index)
            try:
                record, outer_ms, collections = await self.timed_run(prepared)
                if _tool_ran_out_of_memory(record):
                    row = memory_error_row(self.memory_budget_mb, "a tool")
                else:
                    row = record_row(
                        record,
                        scenario,
                        self.engine_name,
                        outer_ms,
                        collections,
                        self.referee_time(latency),
                        ttft=stream_tokens,
                        ttft_floor_ms=floor_ms,
                    )
            except MemoryError:
                row = memory_error_row(self.memory_budget_mb, "the run")
            except Exception:
                row = error_row("engine.run raised: " + traceback.format_exc(limit=5))
            self.send_run(phase, index, row)

    async def throughput(self, command: dict[str, Any]) -> None:
        """Keep ``concurrency`` runs in flight on one shared prepared agent, as a service would."""
        scenario = self.scenarios[command["scenario"]]
        latency = command["latency"]
        concurrency = int(command["concurrency"])
        per_slot = max(1, -(-int(command["min_runs"]) // concurrency))
        window_s = float(command["window_s"])
        self.reset_mock(scenario, latency)
        prepared = await self.engine.prepare(self.context(scenario, latency))
        semaphore = asyncio.Semaphore(concurrency)

        async def warm() -> None:
            async with semaphore:
                await self.engine.run(prepared)

        await asyncio.gather(*(warm() for _ in range(int(command.get("warmup_runs", 0)))))
        self.reset_mock(scenario, latency)
        gc.collect()
        latencies: list[float] = []
        overheads: list[float] = []
        statuses: Counter[str] = Counter()
        start = time.perf_counter()
        cpu_start = time.process_time()
        deadline = start + window_s

        async def slot() -> None:
            done = 0
            while done < per_slot or time.perf_counter() < deadline:
                t0 = time.perf_counter()
                record = await self.engine.run(prepared)
                latencies.append((time.perf_counter() - t0) * 1000)
                overheads.append(record.overhead_ms)
                statuses[record.status] += 1
                done += 1

        await asyncio.gather(*(slot() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        cpu_s = time.process_time() - cpu_start
        if self.transport == "inprocess":
            self.mock(latency).reset()
        runs = len(latencies)
        row = {
            "concurrency": concurrency,
            "runs": runs,
            "errors": runs - statuses.get("completed", 0),
            "statuses": dict(statuses),
            "duration_s": elapsed,
            "runs_per_s": runs / elapsed if elapsed > 0 else None,
            "latency_mean_ms": sum(latencies) / runs if runs else None,
            **_percentiles(latencies),
            "overhead_median_ms": _percentiles(overheads)["latency_p50_ms"],
            "cpu_ms_per_run": cpu_s * 1000 / runs if runs else None,
            "cpu_utilization": cpu_s / elapsed if elapsed > 0 else None,
            "window_s": window_s,
            "latencies_ms": [round(v, 3) for v in latencies],
            "pid": os.getpid(),
            "ended_at": time.time(),
        }
        self.channel.send({"type": "throughput", "row": row})


def _post_reset(base_url: str) -> None:
    """Ask the loopback mock to forget its fault counters (``POST /reset``)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        connection.request("POST", "/reset", body=b"")
        connection.getresponse().read()
    finally:
        connection.close()


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.runner.run_worker")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--scenario-dir")
    parser.add_argument("--transport", choices=["inprocess", "loopback"], default="inprocess")
    parser.add_argument(
        "--base-url", action="append", default=[], help="latency=URL of a loopback mock"
    )
    parser.add_argument("--reference", help="scenario of the cold first run")
    parser.add_argument("--trust-handlers", action="store_true")
    parser.add_argument("--handlers-from", action="append", default=[])
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    offline_env(os.environ)  # before the engine's framework is imported
    args = _parse(argv)
    channel = Channel.claim()
    try:
        allow_handlers(HandlerPolicy.from_dirs(args.handlers_from, trust_all=args.trust_handlers))
        budget_mb = memory_budget_mb()
        scenarios = load_scenarios(args.scenario_dir)
        # the harness's own one-off costs land before the baseline: the tokenizer's tables
        request_tokens([{"role": "user", "content": "warm up"}])
        harness_modules = len(sys.modules)
        rss_before = rss_mb()
        start = time.perf_counter()
        engine = create_engine(args.engine)
        import_ms = (time.perf_counter() - start) * 1000
    except BaseException:
        channel.fatal(limit_chars=100_000)
        return 1
    modules_after_import = len(sys.modules)
    rss_after_import = rss_mb()
    base_urls = dict(item.split("=", 1) for item in args.base_url)
    worker = Worker(args.engine, engine, scenarios, args.transport, base_urls, channel)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    footprint: dict[str, Any] = {
        "harness_modules": harness_modules,
        "engine_import_ms": import_ms,
        "modules_after_import": modules_after_import,
        "rss_before_import_mb": rss_before,
        "rss_after_import_mb": rss_after_import,
        "reference_scenario": args.reference,
        "pid": os.getpid(),
    }
    if args.reference:
        footprint.update(loop.run_until_complete(worker.first_run(args.reference)))
    footprint["modules_after_first_run"] = len(sys.modules)
    footprint["rss_after_first_run_mb"] = rss_mb()
    footprint["peak_rss_mb"] = peak_rss_mb()
    footprint.update(limit_memory(budget_mb))
    worker.memory_budget_mb = budget_mb
    channel.send({"type": "ready", "footprint": footprint})
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        op = command.get("op")
        try:
            if op == "batch":
                loop.run_until_complete(worker.batch(command))
                channel.send({"type": "batch_done"})
            elif op == "throughput":
                loop.run_until_complete(worker.throughput(command))
            elif op == "load_prepare":
                warmup = int(command.get("warmup", 3))
                loop.run_until_complete(
                    worker.load.prepare(command["scenario"], command["latency"], warmup)
                )
                channel.send({"type": "load_ready"})
            elif op == "load":
                row = loop.run_until_complete(worker.load.level(command))
                channel.send({"type": "load", "row": row})
            elif op == "exit":
                break
            else:
                raise ValueError(f"unknown command {op!r}")
        except Exception:
            channel.fatal(limit_chars=100_000)
            os._exit(1)
    channel.out.flush()
    # hung sync tool threads (see bench.engines.kit.tools) would block a normal interpreter exit
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
