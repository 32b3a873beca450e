"""In-process transports: httpx (or httpx2) clients whose requests the mock answers directly.

No sockets are opened. Both APIs are served: OpenAI's ``/v1/chat/completions`` and
Anthropic's ``/v1/messages`` (base URL ``ANTHROPIC_BASE_URL``: its clients add the path). The same class is built for ``httpx`` and for ``httpx2`` (which the
openai SDK 3.x uses), because each library only accepts its own transport types. Like a
socket, they honour the client's read timeout (a reply delayed past it, or a body that goes
silent longer, raises the library's ``ReadTimeout``), and a scripted dropped connection
raises its ``RemoteProtocolError`` mid-body, as a socket closed by the server does.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Iterator
from functools import cache
from typing import Any

from bench.referee.core import MockLLM
from bench.referee.faults import DROPPED_CHUNKED, dropped_body
from bench.referee.reply import MockReply, error_reply

BASE_URL = "http://mockllm.test/v1"
# Anthropic's clients take the host and add /v1/messages themselves
ANTHROPIC_BASE_URL = "http://mockllm.test"
CHAT_PATH = "/v1/chat/completions"
MESSAGES_PATH = "/v1/messages"

# True while the mock sleeps its scripted latency: that wait is the LLM's, never a run's own
# choice (``bench.engines.kit.waits`` reads it; the referee imports nothing of the engines).
SCRIPTED_WAIT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "schedbench_mock_scripted_wait", default=False
)


async def _scripted_sleep(seconds: float) -> None:
    """``asyncio.sleep`` marked as the mock's scripted latency."""
    token = SCRIPTED_WAIT.set(True)
    try:
        await asyncio.sleep(seconds)
    finally:
        SCRIPTED_WAIT.reset(token)


def _scripted_sleep_sync(seconds: float) -> None:
    """``time.sleep`` marked as the mock's scripted latency."""
    token = SCRIPTED_WAIT.set(True)
    try:
        time.sleep(seconds)
    finally:
        SCRIPTED_WAIT.reset(token)


def _lib(name: str) -> Any:  # httpx or httpx2: their classes are chosen at run time
    if name == "httpx2":
        import httpx2

        return httpx2
    import httpx

    return httpx


def _read_timeout(request: Any) -> float | None:
    """The client's read timeout, which a real socket would enforce (None: wait forever)."""
    return (request.extensions.get("timeout") or {}).get("read")


def _route(mock: MockLLM, method: str, path: str, body: bytes) -> MockReply:
    if path.rstrip("/") == CHAT_PATH and method == "POST":
        return mock.handle(body)
    if path.rstrip("/") == MESSAGES_PATH and method == "POST":
        return mock.handle_messages(body)
    return error_reply(
        404,
        f"the mock serves only POST {CHAT_PATH} and POST {MESSAGES_PATH}, not {method} {path}",
        "not_found",
    )


def _dropped(reply: MockReply, sent: int) -> str:
    """What the client library says when the server closes the connection mid-body."""
    if reply.chunks is not None:
        return DROPPED_CHUNKED
    return dropped_body(sent, len(reply.body))


@cache
def transport_classes(lib_name: str = "httpx") -> tuple[type, type]:
    """(async transport class, sync transport class) for ``httpx`` or ``httpx2``."""
    lib = _lib(lib_name)
    bases: Any = lib  # the classes below subclass the chosen library's

    class AsyncChunks(bases.AsyncByteStream):
        """A body that can be read once, like a socket's, delivered as the reply's
        ``deliveries()`` say: paced, stalled past the read timeout, or dropped.

        The openai SDK drains ``response.stream`` after ``[DONE]`` (HTTP/1.1 connection
        reuse): on a socket that finds EOF at once; a re-iterable body would be played
        again, paced, and charged to the engine (up to the SDK's 0.1 s drain timeout).
        """

        def __init__(self, reply: MockReply, request: Any):
            self._reply, self._request = reply, request
            self._read = False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            if self._read:
                return  # EOF: the body was already read
            self._read = True
            reply = self._reply
            if not reply.paced and not reply.broken and reply.chunks is not None:
                for chunk in reply.chunks:  # the common case: back to back
                    yield chunk
                return
            loop = asyncio.get_running_loop()
            start, timeout, sent = loop.time(), _read_timeout(self._request), 0
            for offset, piece in reply.deliveries():
                # paced against a schedule: each sleep's overshoot (epoll rounds up to the
                # millisecond) must not add up over hundreds of chunks
                if (wait := start + offset - loop.time()) > 0:
                    if timeout is not None and wait > timeout:
                        await _scripted_sleep(timeout)
                        raise lib.ReadTimeout(f"no data within {timeout:g}s", request=self._request)
                    await _scripted_sleep(wait)
                if piece is None:
                    raise lib.RemoteProtocolError(_dropped(reply, sent), request=self._request)
                sent += len(piece)
                yield piece

    class SyncChunks(bases.SyncByteStream):
        """The same, for sync clients: readable once."""

        def __init__(self, reply: MockReply, request: Any):
            self._reply, self._request = reply, request
            self._read = False

        def __iter__(self) -> Iterator[bytes]:
            if self._read:
                return  # EOF: the body was already read
            self._read = True
            reply = self._reply
            start, timeout, sent = time.monotonic(), _read_timeout(self._request), 0
            for offset, piece in reply.deliveries():
                if (wait := start + offset - time.monotonic()) > 0:
                    if timeout is not None and wait > timeout:
                        _scripted_sleep_sync(timeout)
                        raise lib.ReadTimeout(f"no data within {timeout:g}s", request=self._request)
                    _scripted_sleep_sync(wait)
                if piece is None:
                    raise lib.RemoteProtocolError(_dropped(reply, sent), request=self._request)
                sent += len(piece)
                yield piece

    def response(reply: MockReply, request: Any, stream_class: type) -> Any:
        if reply.chunks is None and not reply.broken:
            return lib.Response(reply.status, headers=reply.headers, content=reply.body)
        return lib.Response(
            reply.status, headers=reply.headers, stream=stream_class(reply, request)
        )

    class MockAsyncTransport(bases.AsyncBaseTransport):
        """Serves requests from a MockLLM inside the event loop."""

        def __init__(self, mock: MockLLM):
            self.mock = mock

        async def handle_async_request(self, request: Any) -> Any:
            body = await request.aread()
            reply = _route(self.mock, request.method, request.url.path, body)
            if reply.delay_s:
                timeout = _read_timeout(request)
                if timeout is not None and reply.delay_s > timeout:
                    await _scripted_sleep(timeout)
                    raise lib.ReadTimeout(f"no response within {timeout:g}s", request=request)
                await _scripted_sleep(reply.delay_s)
            else:
                # A real HTTP request always suspends while it waits for the socket; so must
                # this one, or concurrent runs of an engine that awaits nothing else would run
                # one after the other and its latency under concurrency would mean nothing.
                await asyncio.sleep(0)
            return response(reply, request, AsyncChunks)

    class MockSyncTransport(bases.BaseTransport):
        """Serves requests from a MockLLM in the calling thread."""

        def __init__(self, mock: MockLLM):
            self.mock = mock

        def handle_request(self, request: Any) -> Any:
            body = request.read()
            reply = _route(self.mock, request.method, request.url.path, body)
            if reply.delay_s:
                timeout = _read_timeout(request)
                if timeout is not None and reply.delay_s > timeout:
                    _scripted_sleep_sync(timeout)
                    raise lib.ReadTimeout(f"no response within {timeout:g}s", request=request)
                _scripted_sleep_sync(reply.delay_s)
            return response(reply, request, SyncChunks)

    return MockAsyncTransport, MockSyncTransport


def mock_async_client(mock: MockLLM, lib: str = "httpx", **kwargs: Any) -> Any:
    """An ``AsyncClient`` of ``lib`` (httpx or httpx2) served in-process by ``mock``
    (``base_url``: ``BASE_URL`` unless given, e.g. ``ANTHROPIC_BASE_URL``)."""
    async_cls, _ = transport_classes(lib)
    kwargs.setdefault("base_url", BASE_URL)
    return _lib(lib).AsyncClient(transport=async_cls(mock), **kwargs)


def mock_client(mock: MockLLM, lib: str = "httpx", **kwargs: Any) -> Any:
    """A sync ``Client`` of ``lib`` served in-process by ``mock``."""
    _, sync_cls = transport_classes(lib)
    kwargs.setdefault("base_url", BASE_URL)
    return _lib(lib).Client(transport=sync_cls(mock), **kwargs)
