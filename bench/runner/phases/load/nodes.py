"""Where the load phase's processes run: the mock pool on one node, the load workers on others.

On one host (the default) everything is this process's ``LoadNode``, called directly: the
phase is what it always was. On a Dask distributed cluster (``schedbench run --cluster ADDRESS
--spread-load``) each node's ``LoadNode`` is a Dask actor on that node's worker: the mock
pool is started on one node, the engine's load workers on the others, and the launcher drives
them through actor calls (one thread per node, so a node's calls run in the order sent).

A ``LoadNode`` also reads its host for the level's accounting: the CPU time of the processes
it started, the host's busy CPU time, and its wall clock (``Placement.clock_offsets_s``
compares each node's clock with the launcher's, so that the processes of a level start
together from one time).
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.errors import WorkerError
from bench.referee.pool import HOST, MockPool, ProbeResult, probe
from bench.runner.channel import Message
from bench.runner.metadata import host_busy_s, machine_cores
from bench.runner.process import WorkerProcess

LOCAL_LEAD_S = 0.3  # a level's processes start this long after the command is sent
REMOTE_LEAD_S = 1.0  # ... and across nodes, where each send is a network round trip


def processes_cpu_s(pids: Sequence[int]) -> float:
    """CPU seconds these processes have used so far (those gone count nothing)."""
    import psutil

    used = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.Error:
            continue
        used += times.user + times.system
    return used


class LoadNode:
    """The load phase's processes on one host: the mock pool, the load workers (by pid)."""

    def __init__(self, log_dir: str | None = None):
        # a node on another host has no run folder: its workers' logs go to a temporary one
        self._temporary = not log_dir
        self.log_dir = (
            Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="schedbench-load-"))
        )
        self._pool: MockPool | None = None
        self._workers: dict[int, WorkerProcess] = {}
        self._started: list[int] = []  # every process this node started: the mock's, workers'

    def facts(self) -> dict[str, Any]:
        """The host's name, its cores and this process's pid."""
        return {"host": socket.gethostname(), "cores": machine_cores(), "pid": os.getpid()}

    def clock(self) -> float:
        return time.time()

    def busy_s(self) -> float:
        return host_busy_s()

    def cpu_s(self, pids: Sequence[int]) -> float:
        return processes_cpu_s(pids)

    # -- the mock pool ------------------------------------------------------------------

    def start_pool(
        self, n: int, latency: str, scenario_dir: str | None, host: str = HOST
    ) -> tuple[str, list[int]]:
        """Start ``n`` mock processes listening on ``host``: (their base URL, their pids)."""
        self._pool = MockPool.start(n, latency, scenario_dir, host=host)
        self._started += self._pool.pids
        return self._pool.base_url, self._pool.pids

    def pool_cpu_s(self) -> list[float]:
        assert self._pool is not None
        return self._pool.cpu_s()

    def probe_pool(
        self, requests: list[dict[str, Any]], concurrency: int, duration_s: float
    ) -> list[ProbeResult]:
        """The pool's ceiling, measured by a bare client on this node (``pool.probe``)."""
        assert self._pool is not None
        return probe(self._pool, requests, concurrency=concurrency, duration_s=duration_s)

    def stop_pool(self) -> None:
        if self._pool is not None:
            self._pool.stop()
            self._pool = None

    # -- load workers -------------------------------------------------------------------

    def spawn(self, engine: str, log_name: str, options: dict[str, Any]) -> int:
        """Start a load worker of ``engine`` (``WorkerProcess`` keyword ``options``): its pid."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        worker = WorkerProcess(engine, -1, self.log_dir / log_name, **options)
        self._workers[worker.pid] = worker
        self._started.append(worker.pid)
        return worker.pid

    def started(self) -> list[int]:
        """The pids of every process this node has started (where a level's pids ran)."""
        return list(self._started)

    def worker(self, pid: int) -> WorkerProcess:
        return self._workers[pid]

    def send(self, pid: int, message: dict[str, Any]) -> None:
        self._workers[pid].send(message)

    def receive(self, pid: int, timeout_s: float) -> Message:
        return self._workers[pid].receive(timeout_s)

    def stderr_tail(self, pid: int) -> str:
        return self._workers[pid].stderr_tail()

    def kill(self, pid: int) -> None:
        self._workers.pop(pid).kill()

    def close(self, pid: int) -> None:
        self._workers.pop(pid).close()

    def shutdown(self) -> None:
        """Stop everything this node started; its temporary log folder goes too, unless a
        worker's log in it has text to read."""
        for pid in list(self._workers):
            self.kill(pid)
        self.stop_pool()
        if self._temporary:
            with contextlib.suppress(OSError):  # not empty: kept
                self.log_dir.rmdir()


class NodeHandle(Protocol):
    """A ``LoadNode`` seen from the launcher: here, or an actor on another node."""

    host: str
    cores: int
    local: bool

    def call(self, method: str, *args: Any) -> Any: ...


class LocalHandle:
    """This process's own ``LoadNode``, called directly."""

    local = True

    def __init__(self, node: LoadNode):
        self.node = node
        self.host = socket.gethostname()
        self.cores = machine_cores()

    def call(self, method: str, *args: Any) -> Any:
        return getattr(self.node, method)(*args)


class RemoteHandle:
    """A ``LoadNode`` Dask actor on a cluster node; a failed call is a ``WorkerError`` (the
    level it served is lost, as when a local worker dies)."""

    local = False

    def __init__(self, actor: Any, address: str):
        self.actor = actor
        self.address = address
        facts = actor.facts().result()
        self.host = f"{facts['host']}[{address}]"
        self.cores = int(facts["cores"])

    def call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.actor, method)(*args).result()
        except WorkerError:
            raise
        except Exception as exc:  # the node or its worker is gone
            raise WorkerError(f"node {self.address}: {type(exc).__name__}: {exc}") from exc


class NodeWorker:
    """A load worker on a node: the ``WorkerProcess`` interface the phase drives."""

    def __init__(self, node: NodeHandle, pid: int):
        self.node = node
        self.pid = pid

    def send(self, message: dict[str, Any]) -> None:
        self.node.call("send", self.pid, message)

    def receive(self, timeout_s: float) -> Message:
        return self.node.call("receive", self.pid, timeout_s)  # type: ignore[no-any-return]

    def stderr_tail(self) -> str:
        try:
            return str(self.node.call("stderr_tail", self.pid))
        except (WorkerError, KeyError):
            return ""

    def kill(self) -> None:
        with contextlib.suppress(WorkerError, KeyError):
            self.node.call("kill", self.pid)

    def close(self) -> None:
        with contextlib.suppress(WorkerError, KeyError):
            self.node.call("close", self.pid)


@dataclass
class Placement:
    """The mock's node and the load generators' nodes. Process *i* of a level runs on
    ``generators[i % len(generators)]``; one host: the same local node for all."""

    mock: NodeHandle
    generators: list[NodeHandle]
    mock_host: str = HOST  # the address the mock listens on
    clock_offsets_s: dict[int, float] = field(default_factory=dict)  # generator -> offset

    @classmethod
    def local(cls, log_dir: Path | None = None) -> Placement:
        node = LocalHandle(LoadNode(str(log_dir) if log_dir else None))
        return cls(node, [node])

    @property
    def spread(self) -> bool:
        """Some process runs on another node than this one."""
        return not (self.mock.local and all(g.local for g in self.generators))

    @property
    def cores(self) -> int:
        """The generator nodes' cores together (one host: the machine's)."""
        return sum(g.cores for g in _distinct(self.generators))

    def generator(self, process: int) -> tuple[int, NodeHandle]:
        index = process % len(self.generators)
        return index, self.generators[index]

    def compare_clocks(self) -> None:
        """Each generator's clock minus the launcher's (the midpoint of a clock call)."""
        for index, node in enumerate(self.generators):
            if node.local:
                self.clock_offsets_s[index] = 0.0
                continue
            before = time.time()
            theirs = float(node.call("clock"))
            self.clock_offsets_s[index] = theirs - (before + time.time()) / 2

    @property
    def lead_s(self) -> float:
        return REMOTE_LEAD_S if self.spread else LOCAL_LEAD_S

    def hosts(self) -> list[NodeHandle]:
        """One handle per distinct host (its busy CPU is read once)."""
        return _distinct([self.mock, *self.generators])

    def shutdown(self) -> None:
        for node in _distinct([self.mock, *self.generators], by="node"):
            with contextlib.suppress(WorkerError):
                node.call("shutdown")


def _distinct(nodes: Sequence[NodeHandle], by: str = "host") -> list[NodeHandle]:
    """``nodes`` without repeats: of one host (``by="host"``), or one node (``"node"``)."""
    seen: set[Any] = set()
    out = []
    for node in nodes:
        key: Any = node.host.split("[", 1)[0] if by == "host" else id(node)
        if key not in seen:
            seen.add(key)
            out.append(node)
    return out


def on_cluster(client: Any, mock_worker: str, generator_workers: Sequence[str]) -> Placement:
    """A placement on a Dask cluster: a ``LoadNode`` actor on each named worker, the mock
    listening on its worker's address."""
    if not generator_workers:
        raise ValueError("a spread load phase needs at least one generator node")
    if mock_worker in generator_workers:
        raise ValueError(f"{mock_worker} cannot be both the mock's node and a generator")

    def actor(address: str) -> RemoteHandle:
        future = client.submit(LoadNode, workers=[address], actor=True, allow_other_workers=False)
        return RemoteHandle(future.result(), address)

    mock = actor(mock_worker)
    mock_host = mock_worker.split("://", 1)[-1].rsplit(":", 1)[0]
    return Placement(mock, [actor(w) for w in generator_workers], mock_host=mock_host)


__all__ = [
    "LoadNode",
    "LocalHandle",
    "NodeWorker",
    "Placement",
    "RemoteHandle",
    "host_busy_s",
    "on_cluster",
    "processes_cpu_s",
]
