"""``with_timeout``: await a coroutine under a deadline, arming no timer when it needs none.

``asyncio.timeout`` costs ~4 µs (a timer handle scheduled and cancelled) — more than the rest
of a tool call. Many awaits finish without ever suspending (an in-process transport, a tool
that returns at once), and no timer can fire before a coroutine first suspends anyway. So
the coroutine is stepped once by hand; only if it suspends is the deadline armed, and the
rest of it is awaited under ``asyncio.timeout`` exactly as ``await`` would (``_resume`` is
``yield from`` written out, because ``await`` cannot take a half-run coroutine).
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar, cast

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """Our deadline fired (as opposed to a TimeoutError raised by the awaited code itself)."""


async def with_timeout(coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
    """``await coro``, cancelled after ``timeout`` seconds (raises DeadlineExceeded)."""
    if timeout is None:
        return await coro
    try:
        first = coro.send(None)
    except StopIteration as done:  # finished without suspending: no timer needed
        return cast(T, done.value)
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await _resume(coro, first)
    except TimeoutError:
        if deadline.expired():
            raise DeadlineExceeded(f"deadline of {timeout}s exceeded") from None
        raise


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], yielded: Any) -> Generator[Any, Any, T]:
    """Continue a coroutine that already yielded ``yielded`` (the future it waits on)."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # cancellation (the timeout) goes into the coroutine
            try:
                yielded = coro.throw(exc)
            except StopIteration as done:
                return cast(T, done.value)
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as done:
                return cast(T, done.value)


class Watchdog:
    """Cut a stream that goes silent for ``idle`` seconds or runs past ``ends`` (loop time).

    ``touch()`` on every chunk only stores the time; the one timer is re-armed when it fires
    early, so a stream costs one timer per ``idle`` period, not one per chunk. Cancelling goes
    through ``asyncio.Timeout.reschedule`` so cancellation semantics stay asyncio's own::

        watchdog = Watchdog(idle, ends)
        async with asyncio.timeout(None) as timeout:
            watchdog.start(timeout)
            ...  # watchdog.touch() on progress
        # TimeoutError; watchdog.fired is "idle" or "deadline"
    """

    __slots__ = ("_handle", "_loop", "_timeout", "ends", "fired", "idle", "last")

    def __init__(self, idle: float | None, ends: float | None):
        self._loop = asyncio.get_running_loop()
        self.idle, self.ends = idle, ends
        self.last = self._loop.time()
        self.fired: str | None = None
        self._timeout: asyncio.Timeout | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self, timeout: asyncio.Timeout) -> None:
        self._timeout = timeout
        self._arm()

    def touch(self) -> None:
        self.last = self._loop.time()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _arm(self) -> None:
        due = self.last + self.idle if self.idle is not None else None
        if self.ends is not None:
            due = self.ends if due is None else min(due, self.ends)
        if due is not None:
            self._handle = self._loop.call_at(due, self._check)

    def _check(self) -> None:
        now = self._loop.time()
        if self.ends is not None and now >= self.ends:
            self.fired = "deadline"
        elif self.idle is not None and now - self.last >= self.idle:
            self.fired = "idle"
        else:
            self._arm()
            return
        self._handle = None
        if self._timeout is not None:
            self._timeout.reschedule(now)  # asyncio cancels the task and raises TimeoutError
