"""The recording proxy of ``schedbench record``: an OpenAI-compatible endpoint on 127.0.0.1
that forwards every request to the upstream and records the chat completions it relays.

Point an agent's base URL at ``http://127.0.0.1:PORT/v1``: a request for ``/v1/X`` goes to
``UPSTREAM/X`` (query string kept), with the client's own headers (its API key included)
minus the hop-by-hop ones. Every answer is passed on piece by piece as it arrives; a
streamed one is timed chunk by chunk on the way (``stream.StreamReader``). The time runs
from the moment the request's first byte leaves for the upstream: waiting for a connection,
and opening it (TCP, TLS), is not the model's latency. Only ``POST .../chat/completions`` is
recorded; other paths (``/v1/models``) are relayed as they are. Headers are never recorded.
``POST /_schedbench/tools`` takes the agent's reports of its tool runs (``observe``).

Bounded whatever the traffic: a request body of at most ``MAX_REQUEST_BYTES`` (else 413),
and of each exchange at most ``MAX_RECORDED_BYTES`` kept for the recording (a larger one is
relayed whole and recorded as too large); a stream's reader keeps bounded state.
Recording (masking, building, writing) runs on a thread of its own, in arrival order, never
on the event loop, and a recording that fails costs only its own exchange. An answer's last
byte waits for its recording, as a synchronous recorder's would: the agent's next call is
then not timed while the recorder works.

Only programs on this machine may use it: a request whose ``Host`` is not the proxy's own
loopback address (DNS rebinding) or that comes from a web page (``Origin``,
``Sec-Fetch-Site``) is refused with 403 before anything is forwarded.

On start the proxy opens its connection to the upstream with a ``GET /models`` (no
credentials). When that answers as a schedbench mock, it also sends the mock one warm-up
chat completion (not recorded): a fresh mock's first answer pays for loading its tokenizer,
which would otherwise be recorded as the model's latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import httpx
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.traffic.exchange import Exchange, ToolRun
from bench.traffic.observe import TOOLS_PATH
from bench.traffic.redact import header_secrets
from bench.traffic.session import RecordingSession
from bench.traffic.stream import MAX_ANSWER_CHARS, StreamReader, timing_from

READY_PREFIX = "schedbench record: proxy listening on "
CHAT_SUFFIX = "/chat/completions"
UPSTREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=30.0)
WARM_UP_TIMEOUT = httpx.Timeout(10.0)
MAX_REQUEST_BYTES = 64 * 2**20
MAX_RECORDED_BYTES = 8 * 2**20
MAX_TOOL_RUN_BYTES = 2**20
MOCK_OWNER = "schedbench"
WARMED_UP = (
    "schedbench record: the upstream is a schedbench mock: sent it one warm-up request (not "
    "recorded), so that its start-up is not recorded as the model's latency"
)  # how the mock's GET /v1/models names the owner of its models
# hop-by-hop headers, and what the proxy sets itself (the length, an identity encoding)
_NOT_FORWARDED = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
        "content-encoding",
        "accept-encoding",
    }
)


def _headers(headers: Any) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED}


def upstream_url(upstream: str, path: str, query: str) -> str:
    """Where a request for ``path`` on the proxy goes: ``/v1/X`` → ``UPSTREAM/X``."""
    relative = path.removeprefix("/v1") if path == "/v1" or path.startswith("/v1/") else path
    return upstream.rstrip("/") + relative + (f"?{query}" if query else "")


def _json_or_text(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return raw.decode("utf-8", "replace")


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse(
        {
            "error": {
                "message": f"schedbench record: {message}",
                "type": "proxy_error",
                "code": code,
            }
        },
        status_code=status,
    )


def refusal(request: Request) -> Response | None:
    """403 for a request that does not come from a program on this machine: a ``Host``
    other than the proxy's loopback address (a page that rebound its DNS name to
    127.0.0.1), or a browser's ``Origin`` / ``Sec-Fetch-Site``."""
    port = (request.scope.get("server") or ("", 0))[1]
    host = request.headers.get("host", "")
    allowed = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if port == 80:
        allowed |= {"127.0.0.1", "localhost"}
    reason = None
    if host.lower() not in allowed:
        reason = f"Host {host[:100]!r} is not this proxy"
    elif "origin" in request.headers:
        reason = f"a browser request (Origin: {request.headers['origin'][:100]})"
    elif request.headers.get("sec-fetch-site", "none") != "none":
        reason = f"a browser request (Sec-Fetch-Site: {request.headers['sec-fetch-site'][:40]})"
    if reason is None:
        return None
    return _error(
        403, f"refused: {reason}; only programs on this machine may use the proxy", "refused"
    )


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is larger than ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    pieces, size = [], 0
    async for piece in request.stream():
        size += len(piece)
        if size > limit:
            return None
        pieces.append(piece)
    return b"".join(pieces)


class _Recorder:
    """The session's work on one thread of its own, in arrival order: masking, building and
    writing never run on the proxy's event loop, and one failure costs only its own item."""

    def __init__(self, session: RecordingSession):
        self.session = session
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="schedbench-record")

    def exchange(self, exchange: Exchange, secrets: list[str]) -> Future[None]:
        return self._pool.submit(self._safely, "an exchange", self.session.add, exchange, secrets)

    def tool_run(self, run: ToolRun) -> Future[None]:
        return self._pool.submit(self._safely, "a tool run", self.session.add_tool_run, run)

    def _safely(self, what: str, add: Callable[..., Any], *args: Any) -> None:
        try:
            add(*args)
        except Exception as exc:
            self.session.on_event(f"{what} was not recorded: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Wait until everything submitted is recorded."""
        self._pool.shutdown(wait=True)


class _Relay(StreamingResponse):
    """A streaming response that always closes its body: a client that leaves at
    ``[DONE]`` without reading the end (most SDKs) would otherwise leave the relay suspended
    until garbage collection, its recording not made."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()


class _Kept:
    """At most ``MAX_RECORDED_BYTES`` of a body, for the recording."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.size = 0

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.size <= MAX_RECORDED_BYTES:
            self.pieces.append(piece)
        else:
            self.pieces = []

    @property
    def data(self) -> bytes | None:
        return b"".join(self.pieces) if self.size <= MAX_RECORDED_BYTES else None


async def _warm_up(client: httpx.AsyncClient, upstream: str, session: RecordingSession) -> None:
    """Open the connection to the upstream; warm a schedbench mock's first answer."""
    try:
        listed = await client.get(upstream_url(upstream, "/v1/models", ""), timeout=WARM_UP_TIMEOUT)
        models = listed.json().get("data") if listed.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return
    mock = [
        m["id"]
        for m in models or ()
        if isinstance(m, dict) and m.get("owned_by") == MOCK_OWNER and isinstance(m.get("id"), str)
    ]
    if not mock:
        return
    body = {
        "model": mock[0],
        "messages": [{"role": "user", "content": "schedbench record: warm-up"}],
    }
    with contextlib.suppress(httpx.HTTPError):
        for stream in (False, True):
            await client.post(
                upstream_url(upstream, "/v1/chat/completions", ""),
                json={**body, "stream": stream},
                timeout=WARM_UP_TIMEOUT,
            )
    session.on_event(WARMED_UP)


def create_app(
    upstream: str, session: RecordingSession, *, client: httpx.AsyncClient | None = None
) -> Starlette:
    """The proxy's ASGI app; ``client`` reaches the upstream (default: its own httpx client)."""
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        recorder = state["recorder"] = _Recorder(session)
        try:
            async with contextlib.AsyncExitStack() as stack:
                reach = client
                if reach is None:
                    reach = await stack.enter_async_context(
                        httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT)
                    )
                state["client"] = reach
                await _warm_up(reach, upstream, session)
                yield
        finally:
            recorder.close()

    async def tool_run(request: Request) -> Response:
        refused = refusal(request)
        if refused is not None:
            return refused
        body = await _read_body(request, MAX_TOOL_RUN_BYTES)
        if body is None:
            return _error(413, f"a tool run larger than {MAX_TOOL_RUN_BYTES:,} bytes", "too_large")
        try:
            run = ToolRun.model_validate_json(body)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            return _error(400, f"a tool run: {where}: {error['msg']}", "bad_tool_run")
        state["recorder"].tool_run(run)
        return Response(status_code=204)

    async def forward(request: Request) -> Response:
        refused = refusal(request)
        if refused is not None:
            return refused
        body = await _read_body(request, MAX_REQUEST_BYTES)
        if body is None:
            return _error(
                413, f"a request body larger than {MAX_REQUEST_BYTES:,} bytes", "request_too_large"
            )
        headers = _headers(request.headers)
        headers["accept-encoding"] = "identity"  # chunks arrive as sent, undecoded
        url = upstream_url(upstream, request.url.path, request.url.query)
        recorded = request.method == "POST" and request.url.path.rstrip("/").endswith(CHAT_SUFFIX)
        sent: list[float] = []

        async def trace(event: str, _info: Any) -> None:
            # the request's first byte: what came before is the pool and the connection
            if event.endswith("send_request_headers.started") and not sent:
                sent.append(time.perf_counter())

        upstream_client: httpx.AsyncClient = state["client"]
        started_at, before = time.time(), time.perf_counter()
        try:
            reply = await upstream_client.send(
                upstream_client.build_request(
                    request.method, url, content=body, headers=headers, extensions={"trace": trace}
                ),
                stream=True,
            )
        except httpx.HTTPError as exc:
            return _error(
                502, f"upstream unreachable: {type(exc).__name__}: {exc}", "upstream_error"
            )
        started = sent[0] if sent else before
        started_at += started - before
        out_headers = _headers(reply.headers)
        streamed = reply.headers.get("content-type", "").startswith("text/event-stream")
        secrets = header_secrets(request.headers)
        reader = StreamReader() if recorded and streamed else None
        kept = _Kept() if recorded and not streamed else None

        def answer(finished: bool) -> tuple[dict[str, Any] | None, str | None]:
            """The answer to record, or why there is none."""
            too_large = "relayed, not recorded"
            if len(body) > MAX_RECORDED_BYTES:
                return (
                    None,
                    f"the request is larger than {MAX_RECORDED_BYTES // 2**20} MiB: {too_large}",
                )
            if reader is not None:
                if reader.assembler.overflow:
                    return (
                        None,
                        f"the answer is longer than {MAX_ANSWER_CHARS:,} characters: {too_large}",
                    )
                if not reader.complete:
                    return None, "the stream ended before its finish_reason"
                return reader.assembler.completion(), None
            data = kept.data if kept is not None else None
            if data is None:
                return (
                    None,
                    f"the answer is larger than {MAX_RECORDED_BYTES // 2**20} MiB: {too_large}",
                )
            if not finished:
                return None, "the answer was cut before its end"
            parsed = _json_or_text(data)
            return (
                (parsed, None) if isinstance(parsed, dict) else (None, "the response is not JSON")
            )

        def exchange(ended: float, finished: bool) -> Exchange:
            response, error = answer(finished)
            timing = timing_from(started, ended, reader.arrivals if reader is not None else None)
            return Exchange(
                request=_json_or_text(body) if len(body) <= MAX_RECORDED_BYTES else None,
                response=response,
                status=reply.status_code,
                timing=timing,
                started_at=started_at,
                error=error,
                warnings=() if timing is not None else ("no timing: the call took over an hour",),
            )

        async def relay() -> AsyncIterator[bytes]:
            finished = False
            try:
                async for piece in reply.aiter_bytes():
                    now = time.perf_counter()
                    if reader is not None:
                        reader.feed(piece, now)
                    elif kept is not None:
                        kept.add(piece)
                    yield piece
                finished = True
            finally:
                ended = time.perf_counter()
                recording = None
                if recorded:
                    try:
                        recording = state["recorder"].exchange(exchange(ended, finished), secrets)
                    except Exception as exc:  # the relay goes on whatever the recording does
                        session.on_event(
                            f"an exchange was not recorded: {type(exc).__name__}: {exc}"
                        )
                with contextlib.suppress(Exception):
                    await reply.aclose()
                if recording is not None:
                    # the answer's end waits for its recording (the loop serves others
                    # meanwhile): recording this call never competes for the CPU with timing
                    # the agent's next one. Shielded: a client that leaves must not cancel it
                    await asyncio.shield(asyncio.wrap_future(recording))

        return _Relay(relay(), status_code=reply.status_code, headers=out_headers)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[
            Route(TOOLS_PATH, tool_run, methods=["POST"]),
            Route("/{path:path}", forward, methods=methods),
        ],
        lifespan=lifespan,
    )


def _listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # without it each relayed response can stall ~40 ms (Nagle meeting a delayed ACK), as
    # the mock's server notes; bench/traffic stays free of the mock's imports, hence the copy
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    return sock


def serve(upstream: str, session: RecordingSession, port: int) -> None:
    """Run the proxy on 127.0.0.1 until interrupted; prints its base URL once listening."""
    import uvicorn

    sock = _listening_socket(port)
    print(f"{READY_PREFIX}http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(
        create_app(upstream, session),
        log_level="warning",
        access_log=False,
        lifespan="on",
        http="httptools",
    )
    # uvicorn re-raises the signal after a graceful shutdown
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
