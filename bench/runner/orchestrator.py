"""The parent side of a run: import probes, the suite round by round, TTFT, throughput, then
the open-loop load phase (``bench.runner.loadphase``).

Only this process writes the results files. Workers (``bench.runner.worker``) stream one
JSON line per run; each becomes a runs.jsonl row at once (flushed), so a crash of anything
loses at most the run in flight. A worker that dies or stops answering is killed; the runs
its batch still owed become error rows (``crashed: true``, with its stderr tail) and the run
goes on with a fresh worker. ``--resume`` retries exactly the runs that have no row, or
only a crashed one.

Each worker runs in its engine's environment (the registry's ``environment``, built once by
``bench.envs``): before the first phase, every environment the run needs is built or reused;
one that cannot be built skips its engines — their runs become error rows carrying the
reason (``termination: env_unavailable``) and the rest of the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bench.engines.registry import REGISTRY
from bench.envs import MAIN, EnvironmentUnavailable, ensure
from bench.footprint import ENGINE_STACKS, ENGINE_WARMUPS, probe_stack
from bench.metadata import PROJECT_ROOT
from bench.results.files import FOOTPRINT, RUNS, THROUGHPUT, THROUGHPUT_KEY, TTFT
from bench.results.load import finished_repeats, finished_ttft, key_of, latest
from bench.results.store import RunStore
from bench.runner.plan import (
    Batch,
    RunConfig,
    batch_timeout_s,
    build_plan,
    build_ttft_plan,
    ceil_div,
    estimate_run_s,
    every_phase,
    measured,
    pick_reference,
    rotate,
    ttft_scenario,
)
from bench.runner.progress import NullProgress, Progress
from scenarios import HandlerPolicy, Scenario

SPAWN_TIMEOUT_S = 180.0
SPAWN_EST_S = 2.0  # a worker's imports and cold first run, for the ETA
TAIL_CHARS = 2000


class WorkerError(Exception):
    """A worker died, hung, or could not start."""


def environment_of(engine: str) -> str:
    """The environment ``engine`` runs in (plug-in engines: the main one)."""
    known = REGISTRY.get(engine)
    return known.environment if known is not None else MAIN


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        env[var] = "false"
    env.setdefault("OPENAI_API_KEY", "sk-schedbench-mock")
    # the workers import the very code the parent runs (and plug-in engines next to it)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    return env


class WorkerProcess:
    """One ``python -m bench.runner.worker`` child, its message queue and its stderr log."""

    def __init__(
        self,
        engine: str,
        round_no: int,
        log_path: Path,
        *,
        scenario_dir: str | None,
        transport: str,
        base_urls: dict[str, str],
        reference: str | None,
        handler_args: list[str] | None = None,
        python: str = sys.executable,
    ):
        self.engine = engine
        self.round = round_no
        self.log_path = log_path
        # -P: the working directory is not importable (a folder of downloaded files there
        # could shadow any module); the parent's console script never has it either
        command = [python, "-P", "-m", "bench.runner.worker", "--engine", engine]
        command += ["--transport", transport, *(handler_args or [])]
        if scenario_dir is not None:
            command += ["--scenario-dir", scenario_dir]
        for latency, url in base_urls.items():
            command += ["--base-url", f"{latency}={url}"]
        if reference:
            command += ["--reference", reference]
        self._log: IO[str] = log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            encoding="utf-8",
            bufsize=1,
            env=worker_env(),
        )
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"worker-{engine}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                message = {"type": "garbage", "line": line[:500]}
            self._messages.put(message)
        self._messages.put(None)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerError(f"worker {self.pid} is gone ({self._exit_text()}): {exc}") from None

    def receive(self, timeout_s: float) -> dict[str, Any]:
        try:
            message = self._messages.get(timeout=timeout_s)
        except queue.Empty:
            raise WorkerError(
                f"worker {self.pid} sent nothing for {timeout_s:.0f}s (hung); killed"
            ) from None
        if message is None:
            raise WorkerError(f"worker {self.pid} died ({self._exit_text()})")
        if message.get("type") == "fatal":
            raise WorkerError(f"worker {self.pid} failed: {message.get('error', '').strip()}")
        if message.get("type") == "garbage":
            raise WorkerError(f"worker {self.pid} broke the protocol: {message['line']!r}")
        return message

    def _exit_text(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit code {code}"

    def stderr_tail(self, chars: int = TAIL_CHARS) -> str:
        self._log.flush()
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-chars:].strip()

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        self._finish()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within a few seconds."""
        if self.alive():
            try:
                self.send({"op": "exit"})
                self.process.wait(timeout=10)
            except (WorkerError, subprocess.TimeoutExpired):
                self.process.kill()
        self._finish()

    def _finish(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._log.close()
        try:
            if self.log_path.stat().st_size == 0:
                self.log_path.unlink()
        except OSError:
            pass


@dataclass
class Outcome:
    """What happened, for the command's exit code and its final words."""

    timed_runs: int = 0
    warmup_runs: int = 0
    crashed_runs: int = 0
    throughput_levels: int = 0
    crashed_levels: int = 0
    skipped_runs: int = 0
    ttft_runs: int = 0  # timed runs of the TTFT phase
    crashed_ttft_runs: int = 0
    ttft_skipped: str | None = None  # why the TTFT phase did not run, when it was asked for
    load: Any = None  # the load phase's LoadOutcome, when it ran
    messages: list[str] = field(default_factory=list)
    # environment → what meta.json records of it (bench.envs.Environment.meta), or
    # {"status": "error", "error": reason} when it could not be built
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)


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
        # the handlers the user allowed (the command checked them); workers get the same
        self.handler_args = (handlers or HandlerPolicy()).worker_args()
        self.scenarios = scenarios
        self.store = store
        self.progress = progress or NullProgress()
        self.scenario_dir = (
            str(Path(config.scenario_dir).resolve()) if config.scenario_dir is not None else None
        )
        self.reference = pick_reference(config, scenarios)
        self.outcome = Outcome()
        self._workers: dict[str, WorkerProcess] = {}
        self._spawn_failures: dict[tuple[str, int], str] = {}
        self._spawns = 0
        self._servers: dict[str, Any] = {}
        self._base_urls: dict[str, str] = {}
        self._pythons: dict[str, str] = {MAIN: sys.executable}  # environment → interpreter
        self._env_failures: dict[str, str] = {}  # environment → why it could not be built

    # -- the whole run -------------------------------------------------------------------

    def run(self) -> Outcome:
        try:
            self._start_servers()
            self.environments()
            if self.config.footprint:
                self.stack_probes()
            self.suite()
            if self.config.ttft:
                self.ttft()
            if self.config.throughput and self.config.concurrency:
                self.throughput()
            self.versions()
            if self.config.load:
                self.load()
        finally:
            self._close_workers()
            for server in self._servers.values():
                server.stop()
            self.store.sync()
        return self.outcome

    def _profiles(self) -> list[str]:
        needed = {"zero", *self.config.latencies}
        if self.config.throughput:
            needed |= {p.latency for p in self.config.throughput_profiles}
        if ttft_scenario(self.config, self.scenarios) is not None:
            needed.add(self.config.ttft_latency)
        return sorted(needed)

    def _start_servers(self) -> None:
        if self.config.transport != "loopback":
            return
        from bench.mockllm.server import start_server_process

        self.store.logs.mkdir(parents=True, exist_ok=True)
        for latency in self._profiles():
            log = self.store.logs / f"mock.{latency}.log"
            server = start_server_process(self.scenario_dir, latency, log=log)
            self._servers[latency] = server
            self._base_urls[latency] = server.base_url
            self.progress.message(f"loopback mock ({latency}) at {server.base_url}")

    # -- environments --------------------------------------------------------------------

    def environments(self) -> None:
        """Build (or reuse) every environment the run's engines need, before any phase."""
        needed = dict.fromkeys(environment_of(e) for e in self.config.engines)
        needed.pop(MAIN, None)
        for name in needed:
            engines = [e for e in self.config.engines if environment_of(e) == name]
            self.progress.message(f"environment {name} ({', '.join(engines)}): building or reusing")
            try:
                env = ensure(name)
            except EnvironmentUnavailable as exc:
                reason = exc.reason
                self._env_failures[name] = reason
                self.outcome.environments[name] = {"status": "error", "error": reason}
                line = (
                    f"environment {name} could not be built, so {', '.join(engines)} "
                    f"{'is' if len(engines) == 1 else 'are'} skipped (the rest of the run goes "
                    f"on): {reason.splitlines()[-1] if reason else ''}"
                )
                self.outcome.messages.append(line)
                self.progress.message(line)
                continue
            self._pythons[name] = env.python
            self.outcome.environments[name] = {"status": "ok", **env.meta()}
            how = "reused" if env.reused else f"built in {env.build_s:.0f}s with {env.tool}"
            self.progress.message(f"environment {name}: {how}")

    def _env_failure(self, engine: str) -> str | None:
        reason = self._env_failures.get(environment_of(engine))
        if reason is None:
            return None
        return f"environment {environment_of(engine)!r} could not be built: {reason}"

    # -- workers -------------------------------------------------------------------------

    def _spawn(self, engine: str, round_no: int) -> WorkerProcess | None:
        skipped = self._env_failure(engine)
        if skipped is not None:
            self._spawn_failures[(engine, round_no)] = skipped
            return None
        self._spawns += 1
        log = self.store.logs / f"{engine}.round{round_no}.{self._spawns}.log"
        self.store.logs.mkdir(parents=True, exist_ok=True)
        worker = WorkerProcess(
            engine,
            round_no,
            log,
            scenario_dir=self.scenario_dir,
            transport=self.config.transport,
            base_urls=self._base_urls,
            reference=self.reference,
            handler_args=self.handler_args,
            python=self._pythons.get(environment_of(engine), sys.executable),
        )
        try:
            message = worker.receive(SPAWN_TIMEOUT_S)
            if message.get("type") != "ready":
                raise WorkerError(f"worker {worker.pid} said {message.get('type')!r}, not ready")
        except WorkerError as exc:
            reason = f"{exc}\n{worker.stderr_tail()}".strip()
            worker.kill()
            self._spawn_failures[(engine, round_no)] = reason
            self.store.append(
                FOOTPRINT,
                {
                    "kind": "worker",
                    "engine": engine,
                    "round": round_no,
                    "status": "error",
                    "error": reason,
                },
            )
            self.progress.message(f"worker for {engine} could not start: {reason.splitlines()[0]}")
            return None
        self.store.append(
            FOOTPRINT,
            {
                "kind": "worker",
                "engine": engine,
                "round": round_no,
                "status": "ok",
                **message["footprint"],
            },
        )
        return worker

    def worker_for(self, engine: str, round_no: int) -> WorkerProcess | None:
        """This round's worker of ``engine``, started on first use (None: it cannot start)."""
        if (engine, round_no) in self._spawn_failures:
            return None
        worker = self._workers.get(engine)
        if worker is not None and (worker.round != round_no or not worker.alive()):
            worker.close()
            worker = None
        if worker is None:
            worker = self._spawn(engine, round_no)
            self.progress.advance(SPAWN_EST_S, 0)
            if worker is None:
                return None
            self._workers[engine] = worker
        return worker

    def _drop_worker(self, engine: str) -> None:
        worker = self._workers.pop(engine, None)
        if worker is not None:
            worker.kill()

    def _close_workers(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    # -- import probes -------------------------------------------------------------------

    def stack_probes(self) -> None:
        """Probe each distinct stack (imports + warm-up) in fresh interpreters of its engine's
        environment; one row per engine using it."""
        Stack = tuple[str, tuple[str, ...], str]  # environment, modules, warm-up
        stacks: dict[Stack, list[str]] = {}
        for engine in measured(self.config.engines):
            env = environment_of(engine)
            if engine in ENGINE_STACKS and env not in self._env_failures:
                key = (env, ENGINE_STACKS[engine], ENGINE_WARMUPS.get(engine, ""))
                stacks.setdefault(key, []).append(engine)
        done: dict[Stack, int] = {}
        for row in self.store.rows(FOOTPRINT):
            if row.kind == "stack" and row.status == "ok" and row.probe_of is None:
                key = (row.environment, row.stack, row.warmup)
                done[key] = done.get(key, 0) + 1
        order = tuple(stacks)
        todo = [
            (p, stack)
            for p in range(self.config.footprint_processes)
            for stack in rotate(order, p)
            if done.get(stack, 0) <= p
        ]
        if not todo:
            return
        self.progress.phase("imports", float(len(todo)), len(todo), "probes")
        for probe, (env, modules, warmup) in todo:
            engines = stacks[(env, modules, warmup)]
            what = " + ".join(modules) + (" and warms up" if warmup else "")
            where = "" if env == MAIN else f" ({env})"
            self.progress.describe(f"a fresh interpreter{where} imports {what}")
            result = probe_stack(modules, warmup, python=self._pythons[env])
            # the first engine's row is the probe; the others share it (probe_of)
            for i, engine in enumerate(engines):
                row = {
                    "kind": "stack",
                    "engine": engine,
                    "probe": probe,
                    "warmup": warmup,
                    "environment": env,
                }
                row.update(result)
                if i:
                    row["probe_of"] = engines[0]
                self.store.append(FOOTPRINT, row)
            self.progress.advance(1.0)

    # -- the suite -----------------------------------------------------------------------

    def suite(self) -> None:
        done = finished_repeats(self.store.rows(RUNS))
        plan = build_plan(self.config, self.scenarios, done)
        self.outcome.skipped_runs = sum(len(v) for v in done.values())
        total_runs = sum(b.warmup + len(b.repeats) for b in plan.batches)
        spawns = len({(b.engine, b.round) for b in plan.batches})
        self.progress.phase("suite", plan.est_s + spawns * SPAWN_EST_S, total_runs)
        current_round = None
        last_round = self.config.rounds - 1
        for batch in plan.batches:
            if batch.round != current_round:
                self._close_workers()
                current_round = batch.round
            latency = f" · {batch.latency}" if len(self.config.latencies) > 1 else ""
            self.progress.describe(
                f"round {batch.round + 1}/{self.config.rounds} · {batch.engine} · "
                f"{batch.scenario}{latency}"
            )
            worker = self.worker_for(batch.engine, batch.round)
            if worker is None:
                self._unstarted_rows(batch, batch.round)
                self.progress.advance(batch.est_s, batch.warmup + len(batch.repeats))
                continue
            self._run_batch(worker, batch)
        if current_round is not None and current_round != last_round:
            self._close_workers()

    def _ids(self, batch: Batch, phase: str, index: int) -> dict[str, Any]:
        return {
            "engine": batch.engine,
            "scenario": batch.scenario,
            "latency": batch.latency,
            "transport": self.config.transport,
            "round": batch.round,
            "repeat": index,
            "phase": phase,
        }

    def _run_batch(self, worker: WorkerProcess, batch: Batch, *, ttft: bool = False) -> None:
        """One batch into runs.jsonl, or (``ttft``) a TTFT batch into ttft.jsonl."""
        target = TTFT if ttft else RUNS
        pending = list(batch.repeats)
        received = 0
        command = {
            "op": "batch",
            "scenario": batch.scenario,
            "latency": batch.latency,
            "warmup": batch.warmup,
            "repeats": list(batch.repeats),
        }
        if ttft:
            command["stream_tokens"] = True
        try:
            worker.send(command)
            timeout = batch_timeout_s(batch.est_run_s)
            while True:
                message = worker.receive(timeout)
                kind = message.get("type")
                if kind == "batch_done":
                    break
                if kind != "run":
                    continue
                phase, index = message["phase"], int(message["index"])
                self.store.append(target, {**message["row"], **self._ids(batch, phase, index)})
                received += 1
                if phase == "timed":
                    if index in pending:
                        pending.remove(index)
                    if ttft:
                        self.outcome.ttft_runs += 1
                    else:
                        self.outcome.timed_runs += 1
                else:
                    self.outcome.warmup_runs += 1
                self.progress.advance(batch.est_run_s)
        except WorkerError as exc:
            tail = worker.stderr_tail()
            self._drop_worker(batch.engine)
            reason = f"{exc}\n--- stderr tail ---\n{tail}" if tail else str(exc)
            self._crash_rows(batch, pending, reason, ttft=ttft)
            self.progress.message(
                f"worker for {batch.engine} lost during {batch.scenario} "
                f"(round {batch.round + 1}): {exc}; {len(pending)} runs recorded as errors"
            )
            left = batch.warmup + len(batch.repeats) - received
            self.progress.advance(left * batch.est_run_s, left)
        finally:
            self.store.sync()

    def _unstarted_rows(self, batch: Batch, round_no: int, *, ttft: bool = False) -> None:
        """The batch's runs as error rows: its worker could not start (or its environment
        could not be built: ``env_unavailable``)."""
        reason = self._spawn_failures[(batch.engine, round_no)]
        if self._env_failure(batch.engine) is not None:
            self._crash_rows(batch, list(batch.repeats), reason, ttft=ttft, why="env_unavailable")
        else:
            self._crash_rows(
                batch, list(batch.repeats), f"worker could not start: {reason}", ttft=ttft
            )

    def _crash_rows(
        self,
        batch: Batch,
        indices: list[int],
        reason: str,
        *,
        ttft: bool = False,
        why: str = "worker_crash",
    ) -> None:
        for index in indices:
            self.store.append(
                TTFT if ttft else RUNS,
                {
                    **self._ids(batch, "timed", index),
                    "status": "error",
                    "termination": why,
                    "error": reason[-TAIL_CHARS * 2 :],
                    "crashed": True,
                    "expect_ok": False,
                    "ended_at": time.time(),
                },
            )
        if ttft:
            self.outcome.crashed_ttft_runs += len(indices)
        else:
            self.outcome.crashed_runs += len(indices)

    # -- time to first token -------------------------------------------------------------

    def ttft(self) -> None:
        """Each engine's user-facing token stream on the TTFT scenario, into ttft.jsonl.

        Runs in the last round's workers (the throughput phase reuses them), one batch per
        engine: ``ttft_warmup`` discarded runs, then the runs that have no row yet.
        """
        config = self.config
        scenario = ttft_scenario(config, self.scenarios)
        if scenario is None:
            where = config.scenario_dir or "scenarios/"
            self.outcome.ttft_skipped = (
                f"no scenario {config.ttft_scenario!r} in {where}"
                if config.ttft_repeat >= 1
                else "no TTFT runs asked for"
            )
            self.progress.message(f"TTFT phase skipped: {self.outcome.ttft_skipped}")
            return
        done = finished_ttft(self.store.rows(TTFT), scenario, config.ttft_latency, config.transport)
        batches = build_ttft_plan(config, self.scenarios, done)
        if not batches:
            return
        last_round = config.rounds - 1
        spawns = sum(1 for b in batches if not self._has_worker(b.engine, last_round))
        self.progress.phase(
            "ttft",
            sum(b.est_s for b in batches) + spawns * SPAWN_EST_S,
            sum(b.warmup + len(b.repeats) for b in batches),
        )
        for batch in batches:
            self.progress.describe(
                f"{batch.engine} · {batch.scenario} · {batch.latency} profile, streamed"
            )
            worker = self.worker_for(batch.engine, last_round)
            if worker is None:
                self._unstarted_rows(batch, last_round, ttft=True)
                self.progress.advance(batch.est_s, batch.warmup + len(batch.repeats))
                continue
            self._run_batch(worker, batch, ttft=True)

    def _has_worker(self, engine: str, round_no: int) -> bool:
        worker = self._workers.get(engine)
        return worker is not None and worker.round == round_no and worker.alive()

    # -- the open-loop load phase ----------------------------------------------------------

    def load(self) -> None:
        """Poisson arrivals at a sweep of rates, one process and several (load.jsonl)."""
        from bench.runner.loadphase import LoadPhase

        self._close_workers()
        phase = LoadPhase(
            self.config,
            self.scenarios,
            self.store,
            self.progress,
            self.scenario_dir,
            python_of=lambda engine: self._pythons.get(environment_of(engine)),
            handler_args=self.handler_args,
        )
        self.outcome.load = phase.run()

    # -- throughput ----------------------------------------------------------------------

    def throughput(self) -> None:
        config = self.config
        scenario = config.throughput_scenario or self.reference
        done = {
            key_of(row, THROUGHPUT_KEY)
            for row in latest(self.store.rows(THROUGHPUT), THROUGHPUT_KEY)
            if not row.crashed
        }
        tasks = []
        for profile in config.throughput_profiles:
            run_s = estimate_run_s(self.scenarios[scenario], profile.latency)
            for i, level in enumerate(config.concurrency):
                for engine in rotate(every_phase(config.engines), i):
                    key = (engine, scenario, profile.latency, config.transport, level)
                    if key in done:
                        continue
                    waves = ceil_div(profile.min_runs, level)
                    est = max(profile.window_s, waves * run_s) + profile.warmup_runs * run_s
                    tasks.append((profile, level, engine, est))
        if not tasks:
            self._close_workers()
            return
        self.progress.phase("throughput", sum(t[3] for t in tasks), len(tasks), "levels")
        last_round = config.rounds - 1
        for profile, level, engine, est in tasks:
            self.progress.describe(f"{engine} · {profile.latency} · concurrency {level}")
            ids = {
                "engine": engine,
                "scenario": scenario,
                "latency": profile.latency,
                "transport": config.transport,
                "concurrency": level,
            }
            worker = self.worker_for(engine, last_round)
            try:
                if worker is None:
                    raise WorkerError(
                        self._env_failure(engine)
                        or "worker could not start: " + self._spawn_failures[(engine, last_round)]
                    )
                worker.send(
                    {
                        "op": "throughput",
                        "scenario": scenario,
                        "latency": profile.latency,
                        "concurrency": level,
                        "window_s": profile.window_s,
                        "min_runs": profile.min_runs,
                        "warmup_runs": profile.warmup_runs,
                    }
                )
                message = worker.receive(120.0 + 10 * est)
                self.store.append(THROUGHPUT, {**message["row"], **ids})
                self.outcome.throughput_levels += 1
            except WorkerError as exc:
                tail = worker.stderr_tail() if worker is not None else ""
                self._drop_worker(engine)
                self.store.append(
                    THROUGHPUT,
                    {**ids, "crashed": True, "error": f"{exc}\n{tail}".strip()[-TAIL_CHARS * 2 :]},
                )
                self.outcome.crashed_levels += 1
                self.progress.message(f"throughput of {engine} at {level} lost: {exc}")
            finally:
                self.store.sync()
            self.progress.advance(est)
        self._close_workers()

    # -- the LangChain version matrix ----------------------------------------------------

    def versions(self) -> None:
        """Probe each LangChain line the run measured (``bench.envs.versions``, in fresh
        interpreters of its environment) and write the version table, versions.json."""
        from bench.envs.versions import probe
        from bench.results.load import load_run_folder
        from bench.results.versions import VERSIONS, VersionProbe, version_rows, write_versions

        specs = [
            REGISTRY[e] for e in self.config.engines if e in REGISTRY and REGISTRY[e].version_line
        ]
        if not specs:
            return
        self.progress.phase("versions", 8.0 * len(specs), len(specs), "probes")
        probes: dict[str, VersionProbe | str] = {}
        for spec in specs:
            self.progress.describe(f"does older code run on LangChain {spec.version_line}?")
            skipped = self._env_failure(spec.name)
            if skipped is not None:
                probes[spec.name] = skipped
            else:
                try:
                    found = probe(spec.name, self._pythons[spec.environment])
                    probes[spec.name] = VersionProbe.model_validate(found)
                except Exception as exc:  # a probe that breaks loses its row, not the run
                    probes[spec.name] = f"probe failed: {type(exc).__name__}: {exc}"
            self.progress.advance(8.0)
        self.store.sync()
        folder = load_run_folder(self.store.directory, require_runs=False)
        rows = version_rows(specs, probes, folder.timed_runs, folder.footprint)
        write_versions(self.store.path(VERSIONS), rows)
