"""What really happened in one run, observed at the edges: the HTTP requests and the tools.

Engines never trust a framework's own account of a run. Instead:

- every chat request goes through a ``Recording*Transport`` wrapped around the real transport
  (the in-process mock's, or a socket transport for loopback), which notes the request body,
  the response status and the time spent waiting;
- every tool execution goes through ``bench.engines.kit.tools`` which notes name, arguments, outcome and
  duration;
- every sleep the run asks for itself (retry backoff, Retry-After) is noted by
  ``bench.engines.kit.waits`` as a (start, end) interval: a wait by choice, not framework time.

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


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Disjoint, sorted intervals covering the same time as ``spans``."""
    merged: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _outside(span: tuple[float, float], cover: list[tuple[float, float]]) -> float:
    """Seconds of ``span`` not covered by the disjoint sorted intervals ``cover``."""
    start, end = span
    total = max(end - start, 0.0)
    for c_start, c_end in cover:
        if c_end <= start:
            continue
        if c_start >= end:
            break
        total -= min(end, c_end) - max(start, c_start)
    return max(total, 0.0)


@dataclass
class RunLog:
    """Everything observed during one run."""

    exchanges: list[Exchange] = field(default_factory=list)
    tools: list[ToolExecution] = field(default_factory=list)
    tool_calls_by_name: dict[str, int] = field(default_factory=dict)  # drives fail_times
    # sleeps the run chose (bench.engines.kit.waits): (start, end) perf_counter pairs
    waits: list[tuple[float, float]] = field(default_factory=list)
    closed: float | None = None  # perf_counter when the run's log was closed (end_log)
    ordinal: int = 0  # which run of its cell this is (``numbered``): keys a tool's failure draws

    def next_call_number(self, tool: str) -> int:
        """Count one more call of ``tool`` in this run; returns its number, from 1."""
        n = self.tool_calls_by_name.get(tool, 0) + 1
        self.tool_calls_by_name[tool] = n
        return n

    def tool_time_ms(self) -> float:
        """Time during which at least one tool was running (overlaps counted once)."""
        return (
            sum(end - start for start, end in _union([(t.started, t.end) for t in self.tools]))
            * 1000
        )

    def _wait_spans(self) -> list[tuple[float, float]]:
        """The recorded waits, cut at the log's close (a sleep outliving its run)."""
        limit = self.closed if self.closed is not None else float("inf")
        return [(start, min(end, limit)) for start, end in list(self.waits) if start < limit]

    def waited_ms(self) -> float:
        """Time spent in waits by choice, outside tool bodies (overlaps counted once)."""
        tools = _union([(t.started, t.end) for t in self.tools])
        return sum(_outside(span, tools) for span in _union(self._wait_spans())) * 1000

    def wait_count(self) -> int:
        """Recorded waits that lasted outside tool bodies (a poll loop shows as many)."""
        tools = _union([(t.started, t.end) for t in self.tools])
        return sum(1 for span in self._wait_spans() if _outside(span, tools) > 0)


_CURRENT: contextvars.ContextVar[RunLog | None] = contextvars.ContextVar(
    "schedbench_run_log", default=None
)


def current_log() -> RunLog:
    """The log of the run in progress; outside any run, a throwaway log (events are dropped)."""
    log = _CURRENT.get()
    return RunLog() if log is None else log


_ORDINAL: contextvars.ContextVar[int] = contextvars.ContextVar("schedbench_run_ordinal", default=0)


def start_log() -> tuple[RunLog, contextvars.Token[RunLog | None]]:
    """Open a fresh log for the current context; pass the token to ``end_log``."""
    log = RunLog(ordinal=_ORDINAL.get())
    return log, _CURRENT.set(log)


def set_ordinal(ordinal: int) -> None:
    """Number the runs this context starts from now on (``RunLog.ordinal``): the n-th run of
    a cell gets the same tool-failure draws (``fail_rate``) in every engine. The suite's
    worker numbers its runs by repeat index, the load phase by arrival; unnumbered runs are 0."""
    _ORDINAL.set(ordinal)


def end_log(token: contextvars.Token[RunLog | None]) -> None:
    """Close the log opened by ``start_log`` (waits after this are not the run's)."""
    log = _CURRENT.get()
    if log is not None:
        log.closed = time.perf_counter()
    _CURRENT.reset(token)


def _lib(name: str) -> Any:  # httpx or httpx2: their classes are chosen at run time
    if name == "httpx2":
        import httpx2

        return httpx2
    import httpx

    return httpx


@cache
def recording_transport_class(lib_name: str = "httpx") -> type:
    """A transport of ``lib_name`` (httpx or httpx2) that records, then delegates."""
    lib = _lib(lib_name)
    base: Any = lib.AsyncBaseTransport

    class RecordingAsyncTransport(base):
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
