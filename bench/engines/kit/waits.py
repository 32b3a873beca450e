"""Waits by choice: the sleeps a run asks for itself (retry backoff, Retry-After), recorded.

A run that sleeps between retries (LangChain's ``ToolRetryMiddleware``, the openai SDK's
HTTP retries through ``anyio.sleep``, tenacity) is waiting by its own choice: that time is
never framework overhead. ``install()`` wraps ``asyncio.sleep`` and ``time.sleep`` once per
process so that every sleep of a positive, finite length made while a run's ``RunLog`` is
current (``bench.engines.kit.runlog``; framework tasks and threads inherit it) is noted there
as a (start, end) interval. ``RunLog.waited_ms`` is their union less tool time.

Not counted: zero-length sleeps (a yield to the loop) and infinite ones (a wait for
cancellation, not a delay); the in-process mock's scripted latency (it sleeps under
``bench.referee.transport.SCRIPTED_WAIT``); a tool's scripted latency (inside its tool span,
already in ``tool_ms``). Short polling sleeps *are* counted, and visible as a column and a
count (``wait_count``), never silently subtracted.

Modules that bound a sleep at module level before ``install()`` (``from asyncio import
sleep``, as anyio's asyncio backend does) are re-pointed once; a default argument captured earlier
(``def f(sleep=asyncio.sleep)``) cannot be, so the worker installs this before it imports
any framework (``bench.runner.run_worker``'s first lines). Other ways to wait (an
``Event.wait(timeout)``, ``asyncio.wait_for`` on a timer) are not seen.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from typing import Any

from bench.engines.kit import runlog
from bench.referee.transport import SCRIPTED_WAIT

ORIGINAL_ASYNC_SLEEP = asyncio.sleep
ORIGINAL_TIME_SLEEP = time.sleep
_installed = False
_swapped: list[tuple[dict[str, Any], str, Any]] = []  # (namespace, name, original)


def _log_for(delay: Any) -> runlog.RunLog | None:
    """The run log a sleep of ``delay`` seconds counts in, or None (not a wait by choice)."""
    try:
        if not 0 < delay < math.inf:
            return None
    except TypeError:
        return None
    log = runlog._CURRENT.get()
    if log is None or SCRIPTED_WAIT.get():
        return None
    return log


async def sleep(delay: float, result: Any = None) -> Any:
    """``asyncio.sleep``, noting the wait on the current run's log."""
    log = _log_for(delay)
    if log is None:
        return await ORIGINAL_ASYNC_SLEEP(delay, result)
    start = time.perf_counter()
    try:
        return await ORIGINAL_ASYNC_SLEEP(delay, result)
    finally:
        log.waits.append((start, time.perf_counter()))


def thread_sleep(secs: float) -> None:
    """``time.sleep``, noting the wait on the current run's log (threads copy the context)."""
    log = _log_for(secs)
    if log is None:
        return ORIGINAL_TIME_SLEEP(secs)
    start = time.perf_counter()
    try:
        return ORIGINAL_TIME_SLEEP(secs)
    finally:
        log.waits.append((start, time.perf_counter()))


def installed() -> bool:
    return _installed


def install() -> None:
    """Wrap ``asyncio.sleep`` and ``time.sleep`` (idempotent); re-point modules that already
    bound the originals by name (anyio's asyncio backend)."""
    global _installed
    if _installed:
        return
    swaps = {id(ORIGINAL_ASYNC_SLEEP): sleep, id(ORIGINAL_TIME_SLEEP): thread_sleep}
    for name, module in list(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        if name == __name__ or not isinstance(namespace, dict):
            continue
        for attr, bound in list(namespace.items()):
            if id(bound) in swaps:  # asyncio.sleep, asyncio.tasks.sleep, time.sleep, aliases
                _swapped.append((namespace, attr, bound))
                namespace[attr] = swaps[id(bound)]
    _installed = True


def uninstall() -> None:
    """Put the original sleeps back (tests; a worker never uninstalls)."""
    global _installed
    while _swapped:
        namespace, attr, original = _swapped.pop()
        namespace[attr] = original
    _installed = False
