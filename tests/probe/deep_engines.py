"""Test-only engines for the probe: the raw loop with ``EXTRA`` more Python frames between its
``execute`` and both edges (the HTTP send and the tool body), and one whose tool body runs in a
task started from an async generator's ``anext()`` (as LangChain's streaming does)."""

from __future__ import annotations

import asyncio
from typing import Any

from bench.engines.raw import RawEngine

EXTRA = 5


async def _nest(n: int, coro_fn: Any) -> Any:
    """``n`` frames (n >= 1): a chain of ``n`` nested coroutine calls, then ``coro_fn()``."""
    if n == 1:
        return await coro_fn()
    return await _nest(n - 1, coro_fn)


class DeepRawEngine(RawEngine):
    """The raw loop with ``EXTRA`` layers around its request and its tool calls."""

    name = "deep-raw"
    description = f"the raw loop wrapped in {EXTRA} more calls on both edges (test double)"

    # this method's own frame is one of the EXTRA; _nest adds the others
    async def complete(self, p: Any, body: dict[str, Any]) -> Any:
        return await _nest(EXTRA - 1, lambda: super(DeepRawEngine, self).complete(p, body))

    async def _call_tool(self, p: Any, call: dict[str, Any]) -> str:
        return await _nest(EXTRA - 1, lambda: super(DeepRawEngine, self)._call_tool(p, call))


class AnextRawEngine(RawEngine):
    """The raw loop whose tool calls run in a task that awaits an async generator's anext()."""

    name = "anext-raw"
    description = "the raw loop, tools run through anext() in their own task (test double)"

    async def _call_tool(self, p: Any, call: dict[str, Any]) -> str:
        async def results() -> Any:
            yield await RawEngine._call_tool(self, p, call)

        return await asyncio.create_task(anext(results()))
