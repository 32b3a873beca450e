"""The load phase's referee: mock LLM processes sharing one loopback port, and their ceiling.

One uvicorn process serves the mock on one core. ``MockPool`` starts ``n`` of them, each in
its own process, all listening on the same 127.0.0.1 port (``SO_REUSEPORT``: the kernel
spreads new connections over them), so that neither one process's CPU nor its event loop
caps an engine's load; ``cpu_s()`` reads each one's CPU time (psutil), so every level can say
how busy the referee was. A process is ``python -m bench.referee.pool --port P`` running
the mock's own app (``bench.referee.server.create_app``) on a socket opened here; nothing
of the mock is changed.

``probe`` measures the pool's own ceiling: ``python -m bench.referee.ceiling`` — a bare
httpx client in its own process, no agent at all — keeps ``concurrency`` requests in flight
with the scenario's real request bodies (the raw loop's, captured in-process), streamed or
not, and the pool's CPU per request gives the rate at which its processes would be busy.
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

HOST = "127.0.0.1"


def raise_open_files_limit() -> None:
    """Raise this process's open-files limit to its hard limit (thousands of connections)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def shared_socket(port: int, host: str = HOST) -> socket.socket:
    """A listening socket on ``host``:``port`` (127.0.0.1 unless a cluster's load phase puts
    the mock on a node of its own) that other processes may bind too."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    # without it each response stalls ~40 ms (Nagle meeting the client's delayed ACK)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(4096)
    sock.set_inheritable(True)
    return sock


def serve(port: int, scenario_dir: str | None, latency: str, host: str = HOST) -> None:
    """One mock process on the shared port (prints the base URL once listening)."""
    import uvicorn

    from bench.referee import LatencyProfile, MockLLM
    from bench.referee.server import READY_PREFIX, create_app

    raise_open_files_limit()
    mock = MockLLM(scenario_dir=scenario_dir, latency=LatencyProfile.named(latency), record=False)
    sock = shared_socket(port, host)
    config = uvicorn.Config(
        create_app(mock),
        log_level="warning",
        access_log=False,
        lifespan="off",
        http="httptools",
        backlog=4096,
    )
    print(READY_PREFIX + f"http://{host}:{sock.getsockname()[1]}/v1", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])


@dataclass
class MockPool:
    """``n`` mock processes on one port (see the module docstring). Their stderr goes to
    files (``log_dir``, else temporary ones): a pipe nobody reads fills up under a load
    that makes uvicorn log (clients hanging up mid-reply) and then freezes the server."""

    base_url: str
    processes: list[subprocess.Popen[str]]
    logs: list[IO[bytes]] = field(default_factory=list)
    log_dir: Path | None = None

    @classmethod
    def start(
        cls,
        n: int,
        latency: str,
        scenario_dir: str | None = None,
        timeout_s: float = 30.0,
        log_dir: Path | None = None,
        host: str = HOST,
    ) -> MockPool:
        pool = cls("", [], log_dir=log_dir)
        try:
            port = 0
            for _ in range(max(1, n)):
                url = pool._spawn(port, latency, scenario_dir, timeout_s, host)
                port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
                pool.base_url = url
        except BaseException:
            pool.stop()
            raise
        return pool

    def _spawn(
        self, port: int, latency: str, scenario_dir: str | None, timeout_s: float, host: str
    ) -> str:
        from bench.referee.server import READY_PREFIX

        command = [sys.executable, "-m", "bench.referee.pool", "--port", str(port)]
        if host != HOST:
            command += ["--host", host]
        command += ["--latency", latency]
        if scenario_dir is not None:
            command += ["--scenario-dir", scenario_dir]
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log: IO[bytes] = (self.log_dir / f"mock.load.{len(self.processes)}.log").open("w+b")
        else:
            log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.logs.append(log)
        # stdout carries the one ready line; everything uvicorn logs goes to the file
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
        self.processes.append(process)
        deadline = time.monotonic() + timeout_s
        line = process.stdout.readline() if process.stdout else ""
        if not line.startswith(READY_PREFIX) or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise RuntimeError(f"mock process did not start: {line.strip()} {self.log_tail(-1)}")
        return line.removeprefix(READY_PREFIX).strip()

    def log_tail(self, index: int, chars: int = 2000) -> str:
        """The end of one process's stderr."""
        log = self.logs[index]
        log.flush()
        log.seek(0)
        return log.read().decode("utf-8", "replace")[-chars:].strip()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def cpu_s(self) -> list[float]:
        """Each process's CPU seconds so far (user + system); NaN for one that is gone."""
        import psutil

        out = []
        for process in self.processes:
            try:
                times = psutil.Process(process.pid).cpu_times()
                out.append(times.user + times.system)
            except psutil.Error:
                out.append(float("nan"))
        return out

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        for log in self.logs:
            log.close()
        if self.log_dir is not None:  # keep only logs that say something
            for path in self.log_dir.glob("mock.load.*.log"):
                with contextlib.suppress(OSError):
                    if path.stat().st_size == 0:
                        path.unlink()

    def __enter__(self) -> MockPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def busiest(before: list[float], after: list[float], elapsed_s: float) -> float | None:
    """The busiest process's CPU seconds per wall second between two ``cpu_s`` readings."""
    if elapsed_s <= 0:
        return None
    loads = [(b - a) / elapsed_s for a, b in zip(before, after, strict=True) if b == b and a == a]
    return max(loads) if loads else None


def total(before: list[float], after: list[float], elapsed_s: float) -> float | None:
    """All processes' CPU seconds per wall second between two ``cpu_s`` readings."""
    if elapsed_s <= 0:
        return None
    used = [b - a for a, b in zip(before, after, strict=True) if b == b and a == a]
    return sum(used) / elapsed_s if used else None


@dataclass(frozen=True)
class ProbeResult:
    """One probe of the pool: a bare client's requests and what they cost the mock."""

    stream: bool
    concurrency: int
    requests: int
    errors: int
    elapsed_s: float
    mock_cpu_s: float  # all mock processes together
    client_cpu_s: float

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    @property
    def mock_cpu_ms_per_request(self) -> float:
        return self.mock_cpu_s * 1000 / self.requests if self.requests else float("nan")


def probe(
    pool: MockPool,
    requests: list[dict[str, Any]],
    *,
    concurrency: int,
    duration_s: float,
) -> list[ProbeResult]:
    """Hammer the pool from a separate process (``bench.referee.ceiling``) with ``requests``
    (request bodies: a client's own, so the mock's work is an engine's), JSON replies then
    streamed ones, and measure what each request cost the mock."""
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as bodies:
        json.dump(requests, bodies)
        bodies.flush()
        command = [sys.executable, "-m", "bench.referee.ceiling", "--base-url", pool.base_url]
        command += ["--bodies", bodies.name, "--concurrency", str(concurrency)]
        command += ["--duration", str(duration_s), "--modes", "json,stream"]
        for pid in pool.pids:
            command += ["--mock-pid", str(pid)]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=60 + 8 * duration_s,
            env=dict(os.environ),
        )
    if done.returncode != 0:
        raise RuntimeError(f"mock probe failed: {done.stderr.strip()[-2000:]}")
    results = []
    for line in done.stdout.strip().splitlines():
        report: dict[str, Any] = json.loads(line)
        results.append(
            ProbeResult(
                stream=bool(report["stream"]),
                concurrency=concurrency,
                requests=int(report["requests"]),
                errors=int(report["errors"]),
                elapsed_s=float(report["elapsed_s"]),
                mock_cpu_s=float(report["mock_cpu_s"]),
                client_cpu_s=float(report["cpu_s"]),
            )
        )
    return results


def _main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.referee.pool")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--scenario-dir")
    parser.add_argument("--latency", default="realistic")
    parser.add_argument("--host", default=HOST, help="the address to listen on (127.0.0.1)")
    args = parser.parse_args()
    serve(args.port, args.scenario_dir, args.latency, args.host)


if __name__ == "__main__":
    _main()
