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
from typing import Any, TypeVar

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
        return done.value
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
                return done.value
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as done:
                return done.value
