"""The recording proxy of ``schedbench record``: an OpenAI-compatible endpoint on 127.0.0.1
that forwards every request to the upstream and records the chat completions it relays.

Point an agent's base URL at ``http://127.0.0.1:PORT/v1``: a request for ``/v1/X`` goes to
``UPSTREAM/X`` (query string kept), with the client's own headers (its API key included)
minus the hop-by-hop ones. A streamed answer is passed on piece by piece as it arrives, the
proxy timing each chunk on the way (``stream.StreamReader``); the time runs from just before
the request leaves for the upstream. Only ``POST .../chat/completions`` is recorded; other
paths (``/v1/models``) are relayed as they are. Headers are never recorded.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench.traffic.exchange import Exchange
from bench.traffic.redact import header_secrets
from bench.traffic.session import RecordingSession
from bench.traffic.stream import StreamReader, timing_from

READY_PREFIX = "schedbench record: proxy listening on "
CHAT_SUFFIX = "/chat/completions"
UPSTREAM_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=30.0)
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
    except (ValueError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")


def create_app(
    upstream: str, session: RecordingSession, *, client: httpx.AsyncClient | None = None
) -> Starlette:
    """The proxy's ASGI app; ``client`` reaches the upstream (default: its own httpx client)."""
    state: dict[str, httpx.AsyncClient] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if client is not None:
            state["client"] = client
            yield
            return
        async with httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT) as own:
            state["client"] = own
            yield

    async def forward(request: Request) -> Response:
        body = await request.body()
        headers = _headers(request.headers)
        headers["accept-encoding"] = "identity"  # chunks arrive as sent, undecoded
        url = upstream_url(upstream, request.url.path, request.url.query)
        recorded = request.method == "POST" and request.url.path.rstrip("/").endswith(CHAT_SUFFIX)
        started_at, started = time.time(), time.perf_counter()
        try:
            reply = await state["client"].send(
                state["client"].build_request(request.method, url, content=body, headers=headers),
                stream=True,
            )
        except httpx.HTTPError as exc:
            message = f"schedbench record: upstream unreachable: {type(exc).__name__}: {exc}"
            return JSONResponse(
                {"error": {"message": message, "type": "proxy_error", "code": "upstream_error"}},
                status_code=502,
            )
        out_headers = _headers(reply.headers)
        streamed = reply.headers.get("content-type", "").startswith("text/event-stream")
        secrets = header_secrets(request.headers)
        if not (recorded and streamed):
            try:
                content = await reply.aread()
            finally:
                await reply.aclose()
            if recorded:
                response = _json_or_text(content)
                exchange = Exchange(
                    request=_json_or_text(body),
                    response=response if isinstance(response, dict) else None,
                    status=reply.status_code,
                    timing=timing_from(started, time.perf_counter()),
                    started_at=started_at,
                    error=None if isinstance(response, dict) else "the response is not JSON",
                )
                session.add(exchange, secrets)
            return Response(content, status_code=reply.status_code, headers=out_headers)

        reader = StreamReader()

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for piece in reply.aiter_bytes():
                    reader.feed(piece, time.perf_counter())
                    yield piece
            finally:
                ended = time.perf_counter()
                complete = reader.complete
                session.add(
                    Exchange(
                        request=_json_or_text(body),
                        response=reader.assembler.completion() if complete else None,
                        status=reply.status_code,
                        timing=timing_from(started, ended, reader.arrivals),
                        started_at=started_at,
                        error=None if complete else "the stream ended before its finish_reason",
                    ),
                    secrets,
                )
                with contextlib.suppress(Exception):
                    await reply.aclose()

        return StreamingResponse(relay(), status_code=reply.status_code, headers=out_headers)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)


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
