"""The loopback transport: the mock behind a real HTTP server (starlette + uvicorn) on 127.0.0.1.

``serve()`` runs it in the foreground (``schedbench mock serve``); ``start_server_process()``
runs it in its own process for the harness, so its CPU time is never charged to an engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.mockllm.core import MockLLM, MockReply
from bench.mockllm.latency import LatencyProfile

HOST = "127.0.0.1"
READY_PREFIX = "schedbench mock LLM listening on "


def create_app(mock: MockLLM) -> Starlette:
    """The ASGI app: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health`` and
    ``POST /reset`` (forget recorded requests and fault counters)."""

    async def chat(request: Request) -> Response:
        reply: MockReply = mock.handle(await request.body())
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.chunks is None:
            return Response(reply.body, status_code=reply.status, headers=reply.headers)

        async def events():
            delay, loop = reply.chunk_delay_s, asyncio.get_running_loop()
            start = loop.time()
            for i, chunk in enumerate(reply.chunks):
                # paced against a schedule, so that sleep overshoots do not accumulate
                if delay and i and (wait := start + i * delay - loop.time()) > 0:
                    await asyncio.sleep(wait)
                yield chunk

        return StreamingResponse(events(), status_code=reply.status, headers=reply.headers)

    async def models(_: Request) -> Response:
        data = [
            {"id": f"scenario/{name}", "object": "model", "owned_by": "schedbench"}
            for name in sorted(mock.scenarios)
        ]
        return JSONResponse({"object": "list", "data": data})

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok", "requests": len(mock.requests)})

    async def reset(_: Request) -> Response:
        # fault counters live in this process: the harness resets them between runs
        mock.reset()
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/reset", reset, methods=["POST"]),
        ]
    )


def _listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this on Linux; without it each response stalls ~40 ms
    # (Nagle's algorithm meeting the client's delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((HOST, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def serve(port: int = 0, scenario_dir: Path | str | None = None, latency: str = "zero") -> None:
    """Serve the mock on 127.0.0.1 until interrupted; prints the base URL once listening."""
    import uvicorn

    mock = MockLLM(scenario_dir=scenario_dir, latency=LatencyProfile.named(latency), record=False)
    sock = _listening_socket(port)
    base_url = f"http://{HOST}:{sock.getsockname()[1]}/v1"
    config = uvicorn.Config(
        create_app(mock), log_level="warning", access_log=False, lifespan="off", http="httptools"
    )
    server = uvicorn.Server(config)
    print(READY_PREFIX + base_url, flush=True)
    # uvicorn re-raises the signal after a graceful shutdown
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])


@dataclass
class ServerProcess:
    """A mock server running in its own process."""

    base_url: str
    process: subprocess.Popen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server_process(
    scenario_dir: Path | str | None = None, latency: str = "zero", timeout_s: float = 30.0
) -> ServerProcess:
    """Start ``schedbench mock serve`` on a free port in a child process; wait until it listens."""
    command = [sys.executable, "-P", "-m", "bench.mockllm.server", "--port", "0"]
    command += ["--latency", latency]
    if scenario_dir is not None:
        command += ["--scenario-dir", str(scenario_dir)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    line = process.stdout.readline()
    if not line.startswith(READY_PREFIX) or time.monotonic() > deadline:
        process.kill()
        _, err = process.communicate()
        raise RuntimeError(f"mock server did not start: {line.strip()} {err.strip()[-2000:]}")
    return ServerProcess(line.removeprefix(READY_PREFIX).strip(), process)


def _main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.mockllm.server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--scenario-dir")
    parser.add_argument("--latency", default="zero")
    args = parser.parse_args()
    serve(args.port, args.scenario_dir, args.latency)


if __name__ == "__main__":
    _main()
