"""What really happened in one run, observed at the edges: the HTTP requests and the tools.

Engines never trust a framework's own account of a run. Instead:

- every chat request goes through a ``Recording*Transport`` wrapped around the real transport
  (the in-process mock's, or a socket transport for loopback), which notes the request body,
  the response status and the time spent waiting;
- every tool execution goes through ``bench.engines.kit.tools`` which notes name, arguments, outcome and
  duration.

Both write into the ``RunLog`` of the current run, found through a ``ContextVar`` that
``Engine.run`` sets. Tasks and threads started by a framework inherit a copy of the context
(asyncio does it for tasks; LangChain copies it into its executor threads), so concurrent
runs in one process never mix their logs. Recording costs a list append per event; parsing
and token counting happen after the timed region.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

# The profiling probe (``bench.probe.edges``) sets this to look at the Python stack at the two
# edges of a run: ``EDGE_HOOK("send")`` when a request reaches the recording transport,
# ``EDGE_HOOK("tool")`` when a scenario tool's body starts (``bench.engines.kit.tools``). It is None in
# every measured run, where it costs one global lookup per request and per tool call.
EDGE_HOOK: Callable[[str], None] | None = None


@dataclass
class Exchange:
    """One HTTP request an engine sent, and what came of it."""

    method: str
    path: str
    body: bytes
    started: float  # perf_counter at send
    status: int | None = None  # None: no response (timeout, connection error, cancelled)
    elapsed_s: float = 0.0  # send -> response headers (or -> failure)
    error: str | None = None


@dataclass
class ToolExecution:
    """One execution of a scenario tool, as the tool itself saw it."""

    name: str
    args: dict[str, Any]
    started: float  # perf_counter
    ended: float | None = None  # None: still running (a hung sync tool's thread)
    ok: bool = False
    error: str | None = None

    @property
    def end(self) -> float:
        return self.ended if self.ended is not None else time.perf_counter()

    @property
    def duration_ms(self) -> float:
        return (self.end - self.started) * 1000


@dataclass
class RunLog:
    """Everything observed during one run."""

    exchanges: list[Exchange] = field(default_factory=list)
    tools: list[ToolExecution] = field(default_factory=list)
    tool_calls_by_name: dict[str, int] = field(default_factory=dict)  # drives fail_times

    def next_call_number(self, tool: str) -> int:
        """Count one more call of ``tool`` in this run; returns its number, from 1."""
        n = self.tool_calls_by_name.get(tool, 0) + 1
        self.tool_calls_by_name[tool] = n
        return n

    def tool_time_ms(self) -> float:
        """Time during which at least one tool was running (overlaps counted once)."""
        spans = sorted((t.started, t.end) for t in self.tools)
        total = 0.0
        cur_start = cur_end = None
        for start, end in spans:
            if cur_end is None or start > cur_end:
                if cur_end is not None:
                    total += cur_end - cur_start
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        if cur_end is not None:
            total += cur_end - cur_start
        return total * 1000


_CURRENT: contextvars.ContextVar[RunLog | None] = contextvars.ContextVar(
    "schedbench_run_log", default=None
)


def current_log() -> RunLog:
    """The log of the run in progress; outside any run, a throwaway log (events are dropped)."""
    log = _CURRENT.get()
    return RunLog() if log is None else log


def start_log() -> tuple[RunLog, contextvars.Token]:
    """Open a fresh log for the current context; pass the token to ``end_log``."""
    log = RunLog()
    return log, _CURRENT.set(log)


def end_log(token: contextvars.Token) -> None:
    _CURRENT.reset(token)


def _lib(name: str) -> ModuleType:
    if name == "httpx2":
        import httpx2

        return httpx2
    import httpx

    return httpx


@cache
def recording_transport_class(lib_name: str = "httpx") -> type:
    """A transport of ``lib_name`` (httpx or httpx2) that records, then delegates."""
    lib = _lib(lib_name)

    class RecordingAsyncTransport(lib.AsyncBaseTransport):
        def __init__(self, inner: Any):
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            if EDGE_HOOK is not None:
                EDGE_HOOK("send")
            try:
                body = request.content
            except lib.RequestNotRead:
                body = await request.aread()
            exchange = Exchange(request.method, request.url.path, bytes(body), time.perf_counter())
            current_log().exchanges.append(exchange)
            try:
                response = await self.inner.handle_async_request(request)
            except BaseException as exc:
                exchange.elapsed_s = time.perf_counter() - exchange.started
                exchange.error = f"{type(exc).__name__}: {exc}"
                raise
            exchange.elapsed_s = time.perf_counter() - exchange.started
            exchange.status = response.status_code
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    RecordingAsyncTransport.__name__ = RecordingAsyncTransport.__qualname__ = (
        f"RecordingAsyncTransport[{lib_name}]"
    )
    return RecordingAsyncTransport


def loopback_limits(lib: ModuleType) -> Any:
    """Connection-pool limits of the loopback clients (openai's DEFAULT_CONNECTION_LIMITS)."""
    return lib.Limits(max_connections=1000, max_keepalive_connections=100)


def recording_client(
    lib_name: str,
    *,
    mock: Any = None,
    base_url: str | None = None,
    timeout: float | None = None,
) -> Any:
    """An ``AsyncClient`` of ``lib_name`` that records every request into the current RunLog.

    In-process when ``mock`` is given (no sockets: the mock answers inside the event loop),
    else a real socket transport to ``base_url`` (the loopback mock server).
    """
    lib = _lib(lib_name)
    if mock is not None:
        from bench.referee.transport import BASE_URL, transport_classes

        inner = transport_classes(lib_name)[0](mock)
        base_url = base_url or BASE_URL
    else:
        if base_url is None:
            raise ValueError("recording_client needs a mock (in-process) or a base_url (loopback)")
        # the openai SDK's own pool (what a LangChain user gets without a custom client),
        # for every engine alike: httpx's default (100 connections, 20 kept alive) would
        # queue requests in the harness's client as soon as a service has 100 in flight
        inner = lib.AsyncHTTPTransport(limits=loopback_limits(lib))
    kwargs: dict[str, Any] = {}
    if timeout is not None:
        kwargs["timeout"] = timeout
    return lib.AsyncClient(
        transport=recording_transport_class(lib_name)(inner), base_url=base_url, **kwargs
    )
