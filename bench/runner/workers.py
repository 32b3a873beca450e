"""The run's workers: one ``WorkerProcess`` per engine at a time, started on first use in its
engine's environment, and the environments themselves (built or reused before any phase).

Every phase asks the pool for ``worker_for(engine, round)``; a worker that cannot start (or
whose environment could not be built) is remembered, so that the phase records its runs as
error rows with the reason instead of trying again.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from bench.envs import MAIN, ensure
from bench.errors import EnvironmentUnavailable, WorkerError
from bench.results.files import FOOTPRINT
from bench.results.store import RunStore
from bench.runner.process import SPAWN_TIMEOUT_S, WorkerProcess, environment_of
from bench.runner.progress import Progress

SPAWN_EST_S = 2.0  # a worker's imports and cold first run, for the ETA


@cache
def main_packages() -> dict[str, Any]:
    """Every distribution of this (the main) environment: name → version."""
    return {d.metadata["Name"]: d.version for d in distributions()}


class WorkerPool:
    """The workers and environments of one run (see the module docstring)."""

    def __init__(
        self,
        engines: tuple[str, ...],
        store: RunStore,
        progress: Progress,
        *,
        scenario_dir: str | None,
        transport: str,
        reference: str | None,
        handler_args: list[str],
    ):
        self.engines = engines
        self.store = store
        self.progress = progress
        self.scenario_dir = scenario_dir
        self.transport = transport
        self.reference = reference
        self.handler_args = handler_args
        self.base_urls: dict[str, str] = {}  # latency profile → a loopback mock's URL
        self.pythons: dict[str, str] = {MAIN: sys.executable}  # environment → interpreter
        self.env_failures: dict[str, str] = {}  # environment → why it could not be built
        # environment → what meta.json records of it (bench.envs.Environment.meta), or
        # {"status": "error", "error": reason} when it could not be built
        self.environments: dict[str, dict[str, Any]] = {}
        self._workers: dict[str, WorkerProcess] = {}
        self._spawn_failures: dict[tuple[str, int], str] = {}
        self._spawns = 0
        self._lock = threading.Lock()  # the outcome phase's lanes start workers from threads

    # -- environments --------------------------------------------------------------------

    def build_environments(self) -> list[str]:
        """Build (or reuse) every environment the run's engines need, before any phase; the
        lines that say which could not be built (for the run's final words)."""
        lost: list[str] = []
        needed = dict.fromkeys(environment_of(e) for e in self.engines)
        needed.pop(MAIN, None)
        for name in needed:
            engines = [e for e in self.engines if environment_of(e) == name]
            self.progress.message(f"environment {name} ({', '.join(engines)}): building or reusing")
            try:
                env = ensure(name)
            except EnvironmentUnavailable as exc:
                reason = exc.reason
                self.env_failures[name] = reason
                self.environments[name] = {"status": "error", "error": reason}
                line = (
                    f"environment {name} could not be built, so {', '.join(engines)} "
                    f"{'is' if len(engines) == 1 else 'are'} skipped (the rest of the run goes "
                    f"on): {reason.splitlines()[-1] if reason else ''}"
                )
                lost.append(line)
                self.progress.message(line)
                continue
            self.pythons[name] = env.python
            self.environments[name] = {"status": "ok", **env.meta()}
            how = "reused" if env.reused else f"built in {env.build_s:.0f}s with {env.tool}"
            self.progress.message(f"environment {name}: {how}")
        return lost

    def env_failure(self, engine: str) -> str | None:
        """Why ``engine``'s environment could not be built (None: it was)."""
        reason = self.env_failures.get(environment_of(engine))
        if reason is None:
            return None
        return f"environment {environment_of(engine)!r} could not be built: {reason}"

    def python_of(self, engine: str) -> str | None:
        """The interpreter of ``engine``'s environment (None: not built)."""
        return self.pythons.get(environment_of(engine))

    def packages_of(self, engine: str) -> dict[str, Any]:
        """Every package of ``engine``'s environment and its version (the results cache's
        key): the built environment's record, or this interpreter's for the main one."""
        name = environment_of(engine)
        if name == MAIN:
            return main_packages()
        return dict(self.environments.get(name, {}).get("packages") or {})

    # -- workers -------------------------------------------------------------------------

    def worker_for(
        self, engine: str, round_no: int, *, footprint: bool = True
    ) -> WorkerProcess | None:
        """This round's worker of ``engine``, started on first use (None: it cannot start).

        ``footprint=False``: a worker started beside others (the outcome phase's lanes) does
        not record its import and cold first run as a footprint sample."""
        if (engine, round_no) in self._spawn_failures:
            return None
        worker = self._workers.get(engine)
        if worker is not None and (worker.round != round_no or not worker.alive()):
            worker.close()
            worker = None
        if worker is None:
            worker = self._spawn(engine, round_no, footprint=footprint)
            self.progress.advance(SPAWN_EST_S, 0)
            if worker is None:
                return None
            self._workers[engine] = worker
        return worker

    def prespawn(self, engines: Sequence[str], round_no: int, jobs: int) -> None:
        """Start this round's workers of ``engines`` before their first batch, ``jobs`` at a
        time (one per core). A spawn is imports and one cold run, nothing timed, so the
        suite loses only the wall time of waiting for them one by one; their footprint rows
        say how many started beside each other (``spawned_beside``)."""
        todo = [
            e
            for e in dict.fromkeys(engines)
            if not self.has_worker(e, round_no) and (e, round_no) not in self._spawn_failures
        ]
        if jobs <= 1 or len(todo) <= 1:
            return  # worker_for starts each on first use
        beside = min(jobs, len(todo))
        with ThreadPoolExecutor(max_workers=beside) as pool:
            spawned = pool.map(
                lambda e: self._spawn(e, round_no, footprint=True, beside=beside), todo
            )
            for engine, worker in zip(todo, spawned, strict=True):
                self.progress.advance(SPAWN_EST_S / beside, 0)
                if worker is not None:
                    previous = self._workers.pop(engine, None)
                    if previous is not None:
                        previous.close()
                    self._workers[engine] = worker

    def has_worker(self, engine: str, round_no: int) -> bool:
        worker = self._workers.get(engine)
        return worker is not None and worker.round == round_no and worker.alive()

    def spawn_failure(self, engine: str, round_no: int) -> str:
        """Why this round's worker of ``engine`` did not start (after ``worker_for`` said None)."""
        return self._spawn_failures[(engine, round_no)]

    def drop(self, engine: str) -> None:
        """Kill ``engine``'s worker (it broke); the next ``worker_for`` starts a fresh one."""
        worker = self._workers.pop(engine, None)
        if worker is not None:
            worker.kill()

    def close(self, engine: str) -> None:
        """Let ``engine``'s worker exit (a lane is done with it)."""
        worker = self._workers.pop(engine, None)
        if worker is not None:
            worker.close()

    def close_all(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    def _spawn(
        self, engine: str, round_no: int, *, footprint: bool, beside: int = 1
    ) -> WorkerProcess | None:
        skipped = self.env_failure(engine)
        if skipped is not None:
            self._spawn_failures[(engine, round_no)] = skipped
            return None
        with self._lock:
            self._spawns += 1
            number = self._spawns
        log: Path = self.store.logs / f"{engine}.round{round_no}.{number}.log"
        self.store.logs.mkdir(parents=True, exist_ok=True)
        worker = WorkerProcess(
            engine,
            round_no,
            log,
            scenario_dir=self.scenario_dir,
            transport=self.transport,
            base_urls=self.base_urls,
            reference=self.reference,
            handler_args=self.handler_args,
            python=self.python_of(engine) or sys.executable,
        )
        ids = {"kind": "worker", "engine": engine, "round": round_no}
        try:
            message = worker.receive(SPAWN_TIMEOUT_S)
            if message["type"] != "ready":
                raise WorkerError(f"worker {worker.pid} said {message['type']!r}, not ready")
        except WorkerError as exc:
            reason = f"{exc}\n{worker.stderr_tail()}".strip()
            worker.kill()
            self._spawn_failures[(engine, round_no)] = reason
            self.store.append(FOOTPRINT, {**ids, "status": "error", "error": reason})
            self.progress.message(f"worker for {engine} could not start: {reason.splitlines()[0]}")
            return None
        if footprint:
            row = {**ids, "status": "ok", "spawned_beside": beside, **message["footprint"]}
            self.store.append(FOOTPRINT, row)
        return worker
