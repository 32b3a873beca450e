"""The worker threads that run sync tool handlers: one bounded pool, a bulkhead per tool.

``default_pool()`` is shared by every agent of the process (built on first use), so an agent
per request costs no thread: the pool grows on demand up to ``max_workers`` and idle
workers exit after ``idle_s``. Agents may be given their own pool (``LightweightAgent(...,
threads=ToolThreadPool(...))``); whoever builds a pool closes it with ``shutdown()``.

Python cannot kill a thread. A sync handler that overruns its timeout keeps its worker until
the function returns; the waiter gives up (``Job.abandon()``) and the pool counts the thread
as ``stuck``. The *bulkhead* keeps one hung dependency from taking every worker: a tool has
at most ``limit`` calls in its threads at once — stuck ones included — and further calls of
that tool wait for one of its own slots (under their own timeout) while other tools keep the
rest of the pool.

The bulkhead is the pool's, keyed by the ToolSpec, and independent of where a call runs:
a later "inline when known fast" mode can take a slot and skip the thread hop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any

DEFAULT_MAX_WORKERS = 32
DEFAULT_PER_TOOL = 8


class ToolRaised(Exception):
    """A sync handler raised a BaseException that is not an Exception (CancelledError,
    SystemExit...): it must not cancel or stop the event loop that waits for it."""

    def __init__(self, cause: BaseException):
        self.cause = cause
        super().__init__(type(cause).__name__)


class Job:
    """One sync call handed to the pool; ``future`` resolves on the caller's loop."""

    __slots__ = ("abandoned", "context", "fn", "future", "key", "kwargs", "loop", "running")

    def __init__(
        self,
        fn: Callable[..., Any],
        kwargs: dict[str, Any],
        key: Hashable,
        loop: asyncio.AbstractEventLoop,
    ):
        self.fn, self.kwargs, self.key, self.loop = fn, kwargs, key, loop
        # the caller's context variables (a request id, a tracing span), as asyncio.to_thread
        self.context = contextvars.copy_context()
        self.future: asyncio.Future[Any] = loop.create_future()
        self.abandoned = False  # the waiter gave up (timeout, cancellation)
        self.running = False  # a worker has started the call


_STOP = object()


class ToolThreadPool:
    """Daemon worker threads, at most ``max_workers``; at most ``per_tool`` calls of one tool
    in them at once unless the tool sets its own limit."""

    def __init__(
        self,
        max_workers: int = DEFAULT_MAX_WORKERS,
        *,
        per_tool: int = DEFAULT_PER_TOOL,
        idle_s: float = 30.0,
        name: str = "scheduler-tool",
    ):
        if max_workers < 1 or per_tool < 1:
            raise ValueError("max_workers and per_tool must be >= 1")
        self.max_workers, self.per_tool, self.idle_s, self.name = (
            max_workers,
            per_tool,
            idle_s,
            name,
        )
        self._ready: queue.SimpleQueue[Job | object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._spawned = 0
        self._closed = False
        self._in_flight: dict[Hashable, int] = {}  # per tool: calls given a thread (or queued)
        self._waiting: dict[Hashable, deque[Job]] = {}  # per tool: calls over its limit
        self.stuck = 0  # threads still running a call nobody waits for any more

    @property
    def threads(self) -> int:
        return self._threads

    def in_flight(self, key: Hashable) -> int:
        """Calls of one tool holding a bulkhead slot (running, queued or stuck)."""
        return self._in_flight.get(key, 0)

    def submit(
        self,
        fn: Callable[..., Any],
        kwargs: dict[str, Any],
        key: Hashable,
        limit: int | None = None,
    ) -> Job:
        """Run ``fn(**kwargs)`` in a worker; await ``job.future`` for its value."""
        job = Job(fn, kwargs, key, asyncio.get_running_loop())
        limit = self.per_tool if limit is None else limit
        with self._lock:
            if self._closed:
                raise RuntimeError("the tool thread pool was shut down")
            if self._in_flight.get(key, 0) < limit:
                self._in_flight[key] = self._in_flight.get(key, 0) + 1
                self._dispatch(job)
            else:
                self._waiting.setdefault(key, deque()).append(job)
        return job

    def abandon(self, job: Job) -> None:
        """The waiter gave up on ``job``: skip it if not started, else count a stuck thread."""
        with self._lock:
            if job.abandoned:
                return
            job.abandoned = True
            if job.running:
                self.stuck += 1

    def shutdown(self) -> None:
        """Stop the workers once they are idle (calls already running finish first)."""
        with self._lock:
            self._closed = True
            for _ in range(self._threads):
                self._ready.put(_STOP)

    # -- inside the lock / the workers ------------------------------------------------

    def _dispatch(self, job: Job) -> None:
        self._ready.put(job)
        if self._idle > 0:
            self._idle -= 1  # an idle worker will take it
        elif self._threads < self.max_workers:
            self._threads += 1
            self._spawned += 1
            threading.Thread(
                target=self._work, name=f"{self.name}-{self._spawned}", daemon=True
            ).start()
        # else: every worker is busy (or stuck); the job waits in the queue

    def _release(self, key: Hashable) -> None:
        """A call of ``key`` left its thread: give its slot to the next live waiter."""
        waiting = self._waiting.get(key)
        while waiting:
            job = waiting.popleft()
            if not job.abandoned:
                self._dispatch(job)
                return
        if waiting is not None:
            del self._waiting[key]
        left = self._in_flight[key] - 1
        if left:
            self._in_flight[key] = left
        else:
            del self._in_flight[key]

    def _work(self) -> None:
        while True:
            try:
                job = self._ready.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # truly spare: no job was dispatched to this worker
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue
            if job is _STOP or not isinstance(job, Job):
                with self._lock:
                    self._threads -= 1
                return
            self._run(job)
            with self._lock:
                self._idle += 1
                self._release(job.key)

    def _run(self, job: Job) -> None:
        if not self._started(job):
            return
        try:
            outcome: tuple[bool, Any] = (True, job.context.run(job.fn, **job.kwargs))
        except Exception as exc:  # handed to the waiting coroutine
            outcome = (False, exc)
        except BaseException as exc:  # never let a CancelledError / SystemExit cross over
            outcome = (False, ToolRaised(exc))
        if self._finished(job):
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting
                job.loop.call_soon_threadsafe(_resolve, job.future, outcome)

    def _started(self, job: Job) -> bool:
        """Mark ``job`` running; False if its waiter already gave up."""
        with self._lock:
            job.running = not job.abandoned
            return job.running

    def _finished(self, job: Job) -> bool:
        """Mark ``job`` done; False if its waiter gave up meanwhile (a stuck thread returns)."""
        with self._lock:
            job.running = False
            if job.abandoned:
                self.stuck -= 1
                return False
            return True


def _resolve(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return
    if outcome[0]:
        future.set_result(outcome[1])
    else:
        future.set_exception(outcome[1])


_default: ToolThreadPool | None = None
_default_lock = threading.Lock()


def default_pool() -> ToolThreadPool:
    """The process-wide pool every agent uses unless given its own (built on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = ToolThreadPool()
    return _default
