"""The loopback transport: the mock behind a real HTTP server (starlette + uvicorn) on 127.0.0.1.

``serve()`` runs it in the foreground (``schedbench mock serve``); ``start_server_process()``
runs it in its own process for the harness, so its CPU time is never charged to an engine.

Whatever a client sends gets an answer in OpenAI's error format (``{"error": {message,
type, param, code}}``; on Anthropic's ``/v1/messages``, in Anthropic's) when it is not a
request the mock can serve: an unknown route (404), a wrong method (405), a body over
``max_body_bytes`` (413), a request not received in full within ``request_timeout_s`` (408:
a slow or stalled client never holds a connection forever), bytes that are not HTTP (400),
and any failure of the mock itself (500).

Scripted stream faults (``bench.referee.faults``) are played on the wire: a stall is silence
on the socket, a dropped connection closes it mid-body.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from bench.referee.anthropic import MESSAGES_PATH
from bench.referee.anthropic_wire import error_body as anthropic_error_body
from bench.referee.core import MockLLM
from bench.referee.latency import LatencyProfile
from bench.referee.reply import MockReply, error_body

HOST = "127.0.0.1"
READY_PREFIX = "schedbench mock LLM listening on "
# a request body past this is refused (413); a huge body would hold the event loop, and so
# every other client, while it is parsed and counted
MAX_BODY_BYTES = 8 * 1024 * 1024
# a body this large is parsed and counted in a worker thread: counting 8 MB on the event loop
# held a concurrent small request for 1.3-1.9 s; small ones stay inline (no thread hop)
OFF_LOOP_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 10.0  # to receive one whole request, headers and body


def _error_response(
    status: int, message: str, code: str, *, anthropic: bool = False, **headers: str
) -> Response:
    """An error in OpenAI's format, or in Anthropic's (on its ``/v1/messages`` route)."""
    body = anthropic_error_body(status, message) if anthropic else error_body(status, message, code)
    return Response(
        body,
        status_code=status,
        headers=headers,
        media_type="application/json",
    )


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The whole body, or None as soon as it is known to be longer than ``limit``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class DroppedConnection(Exception):
    """Raised in a response body to drop the connection there (a scripted stream fault):
    uvicorn closes the socket of a response that fails after it started, so the client
    sees a real connection closed mid-body."""


class _QuietDrops(logging.Filter):
    """Keeps uvicorn from logging a scripted drop as an application error."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, DroppedConnection)


def create_app(mock: MockLLM, *, max_body_bytes: int = MAX_BODY_BYTES) -> Starlette:
    """The ASGI app: ``POST /v1/chat/completions``, Anthropic's ``POST /v1/messages``,
    ``GET /v1/models``, ``GET /health`` and ``POST /reset`` (forget recorded requests and
    fault counters)."""
    uvicorn_errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _QuietDrops) for f in uvicorn_errors.filters):
        uvicorn_errors.addFilter(_QuietDrops())

    def endpoint(handle: Callable[[bytes], MockReply], anthropic: bool) -> Callable[..., Any]:
        async def answer(request: Request) -> Response:
            try:
                raw = await _read_body(request, max_body_bytes)
            except ClientDisconnect:  # the client left, or was cut for being too slow
                return Response(status_code=400)
            if raw is None:
                return _error_response(
                    413,
                    f"request body larger than {max_body_bytes:,} bytes",
                    "request_too_large",
                    anthropic=anthropic,
                    connection="close",  # the rest of the body is never read
                )
            if len(raw) < OFF_LOOP_BYTES:
                reply: MockReply = handle(raw)
            else:
                reply = await asyncio.to_thread(handle, raw)
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
            if reply.chunks is None and not reply.broken:
                return Response(reply.body, status_code=reply.status, headers=reply.headers)

            async def pieces() -> AsyncIterator[bytes]:
                paced, loop = reply.paced, asyncio.get_running_loop()
                start = loop.time()
                for offset, piece in reply.deliveries():
                    # paced against a schedule, so that sleep overshoots do not accumulate
                    if paced and (wait := start + offset - loop.time()) > 0:
                        await asyncio.sleep(wait)
                    if piece is None:
                        raise DroppedConnection  # uvicorn closes the socket mid-body
                    yield piece

            return StreamingResponse(pieces(), status_code=reply.status, headers=reply.headers)

        return answer

    async def models(_: Request) -> Response:
        data = [
            {"id": f"scenario/{name}", "object": "model", "owned_by": "schedbench"}
            for name in sorted(mock.scenarios or {})
        ]
        return JSONResponse({"object": "list", "data": data})

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok", "requests": len(mock.requests)})

    async def reset(_: Request) -> Response:
        # fault counters live in this process: the harness resets them between runs
        mock.reset()
        return JSONResponse({"status": "ok"})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        where = f"{request.method} {request.url.path}"
        anthropic = request.url.path.rstrip("/") == MESSAGES_PATH
        if exc.status_code == 404:
            return _error_response(404, f"Unknown request URL: {where}.", "unknown_url")
        if exc.status_code == 405:
            return _error_response(
                405,
                f"Invalid method for URL ({where}).",
                "method_not_allowed",
                anthropic=anthropic,
                **(exc.headers or {}),
            )
        return _error_response(exc.status_code, str(exc.detail), "http_error", anthropic=anthropic)

    async def server_error(request: Request, exc: Exception) -> Response:
        anthropic = request.url.path.rstrip("/") == MESSAGES_PATH
        message = f"the mock failed ({type(exc).__name__})"
        return _error_response(500, message, "mock_error", anthropic=anthropic)

    return Starlette(
        routes=[
            Route("/v1/chat/completions", endpoint(mock.handle, False), methods=["POST"]),
            Route(MESSAGES_PATH, endpoint(mock.handle_messages, True), methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/reset", reset, methods=["POST"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline to receive each request in full.

    uvicorn only times out idle keep-alive connections: a client that connects and sends
    nothing, or sends a request a byte at a time, would hold its connection forever. Here a
    request (from the connection's first byte, or from the start of the next request) that
    is not complete within ``request_timeout_s`` gets a 408 and the connection is closed.
    Bytes that are not HTTP get uvicorn's 400, in OpenAI's error format.
    """

    request_timeout_s: float = REQUEST_TIMEOUT_S

    @classmethod
    def with_timeout(cls, timeout_s: float) -> type[DeadlineProtocol]:
        return type(cls.__name__, (cls,), {"request_timeout_s": timeout_s})

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:
            self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            message = f"request not received in full within {self.request_timeout_s:g} s"
            self._write_error(408, "Request Timeout", message, "request_timeout")
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        self._write_error(400, "Bad Request", msg, "invalid_http")
        self.transport.close()

    def _write_error(self, status: int, reason: str, message: str, code: str) -> None:
        body = error_body(status, message, code)
        head = (
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        self.transport.write(head.encode("ascii") + body)


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


def serve(
    port: int = 0,
    scenario_dir: Path | str | None = None,
    latency: str = "zero",
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> None:
    """Serve the mock on 127.0.0.1 until interrupted; prints the base URL once listening."""
    import uvicorn

    mock = MockLLM(scenario_dir=scenario_dir, latency=LatencyProfile.named(latency), record=False)
    sock = _listening_socket(port)
    base_url = f"http://{HOST}:{sock.getsockname()[1]}/v1"
    config = uvicorn.Config(
        create_app(mock, max_body_bytes=max_body_bytes),
        log_level="warning",
        access_log=False,
        lifespan="off",
        http=DeadlineProtocol.with_timeout(request_timeout_s),
    )
    server = uvicorn.Server(config)
    print(READY_PREFIX + base_url, flush=True)
    # uvicorn re-raises the signal after a graceful shutdown
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])


@dataclass
class ServerProcess:
    """A mock server running in its own process (its stderr goes to ``log``, a file: a pipe
    nobody reads would fill up and freeze the server)."""

    base_url: str
    process: subprocess.Popen[str]
    log: Path | None = None
    temporary_log: bool = False  # ``log`` is a temporary file of ours: gone when left empty

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.temporary_log and self.log is not None:
            with contextlib.suppress(OSError):
                if self.log.stat().st_size == 0:  # a log with text is kept: it says what broke
                    self.log.unlink()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server_process(
    scenario_dir: Path | str | None = None,
    latency: str = "zero",
    timeout_s: float = 30.0,
    log: Path | None = None,
) -> ServerProcess:
    """Start ``schedbench mock serve`` on a free port in a child process; wait until it listens.
    Its stderr goes to ``log`` (default: a temporary file, removed at ``stop`` if the server
    wrote nothing to it), never to an unread pipe."""
    command = [sys.executable, "-P", "-m", "bench.referee.server", "--port", "0"]
    command += ["--latency", latency]
    if scenario_dir is not None:
        command += ["--scenario-dir", str(scenario_dir)]
    temporary = log is None
    if log is None:
        handle, name = tempfile.mkstemp(prefix="schedbench-mock-", suffix=".log")
        os.close(handle)
        log = Path(name)
    with log.open("ab") as err:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.monotonic() + timeout_s
    assert process.stdout is not None  # stdout=PIPE
    line = process.stdout.readline()
    if not line.startswith(READY_PREFIX) or time.monotonic() > deadline:
        process.kill()
        process.wait()
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise RuntimeError(f"mock server did not start: {line.strip()} {tail.strip()}")
    return ServerProcess(line.removeprefix(READY_PREFIX).strip(), process, log, temporary)


def _main() -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.referee.server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--scenario-dir")
    parser.add_argument("--latency", default="zero")
    parser.add_argument("--max-body-mb", type=float, default=MAX_BODY_BYTES / 2**20)
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT_S)
    args = parser.parse_args()
    serve(
        args.port,
        args.scenario_dir,
        args.latency,
        max_body_bytes=int(args.max_body_mb * 2**20),
        request_timeout_s=args.request_timeout,
    )


if __name__ == "__main__":
    _main()
