"""The worst event-loop stall while the scheduler deals with one large tool output.

A heartbeat task on the loop sleeps 1 ms at a time and records the longest time between two
beats while one run handles a tool output of 1, 5 and 20 MB: JSON rows of short words and
numbers, the shape of a database dump or a search result (``--text rows``, or ``minified``
without spaces), or one run of a single letter (``letters``: no point where it can be cut). Four cases, each in its own
event loop, the LLM a scripted in-process ``ChatModel`` (no HTTP, no mock server counting
tokens on the same loop: only the scheduler's own work is measured):

- ``count``: a budget large enough to count the output exactly (``token_counting="exact"``);
- ``refuse``: the default budget (12,000 tokens, ``bounded``), which the output exceeds;
- ``time_limit``: counted exactly, but the request's ``Budget(timeout_s=0.05)`` ends the run
  while it counts; also reports the CPU spent after the run ended, until the counting thread
  returned (``loop.shutdown_default_executor()`` waits for it);
- ``memory``: ``count`` with conversation memory on (6,000 tokens): the run's end trims it;
- ``preview``: no counting; the run stops at ``max_steps=1`` and summarises what it gathered.

Prints, per case and size, the worst gap (median and range over ``--repeat`` runs), the
run's wall time and process CPU time, and the CPU time after its end. ``idle`` is the heartbeat alone. To measure
another checkout of the scheduler (the code before a change), put it first on the path::

    .venv/bin/python benchmarks/loop_stall.py [--sizes 1,5,20] [--repeat 3] [--text KIND]
    git archive BASE scheduler | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/loop_stall.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

import scheduler
from scheduler import (
    AgentConfig,
    Budget,
    ChatResponse,
    LightweightAgent,
    TokenUsage,
    ToolCall,
    ToolSpec,
)

CASES = ("idle", "count", "refuse", "time_limit", "memory", "preview")
BEAT_S = 0.001


class ScriptedModel:
    """Asks for the ``dump`` tool once, then answers."""

    model = "scripted"

    async def complete(self, messages: list[dict[str, Any]], **_: Any) -> ChatResponse:
        await asyncio.sleep(0)
        usage = TokenUsage(10, 1)
        if messages[-1]["role"] == "tool":
            return ChatResponse("done", finish_reason="stop", usage=usage)
        return ChatResponse(None, [ToolCall("call_1", "dump", "{}")], "tool_calls", usage)

    async def complete_streaming(self, messages: list[dict[str, Any]], **kw: Any) -> ChatResponse:
        return await self.complete(messages)


def make_text(megabytes: int, kind: str) -> str:
    size = megabytes * 1_000_000
    if kind == "letters":  # no cut point at all: the worst case for counting in pieces
        return "x" * size
    separators = (",", ":") if kind == "minified" else (", ", ": ")
    rows, n = [], 0
    while n < size:
        row = {"id": len(rows), "sku": f"A{len(rows):07d}", "note": "shipped on time"}
        rows.append(json.dumps(row, separators=separators))
        n += len(rows[-1]) + 2
    return "[" + separators[0].join(rows) + "]"


def agent_for(case: str, text: str) -> tuple[LightweightAgent, Budget | None]:
    dump = ToolSpec("dump", "A large dump.", {"type": "object", "properties": {}}, lambda: text)
    options: dict[str, Any] = {"max_same_tool_calls": None}
    budget = None
    if case in ("count", "time_limit", "memory"):
        options.update(token_budget=10**9, token_counting="exact")
    if case == "memory":
        options.update(memory=True, memory_max_tokens=6_000)
    if case == "time_limit":
        budget = Budget(timeout_s=0.05)
    if case == "preview":
        options.update(token_budget=None, max_steps=1, summarize_on_max_steps=False)
    return LightweightAgent(ScriptedModel(), AgentConfig(**options), tools=[dump]), budget


async def heartbeat(stop: asyncio.Event, worst: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(BEAT_S)
        now = time.perf_counter()
        worst[0] = max(worst[0], now - last)
        last = now


async def measure(case: str, text: str) -> dict[str, Any]:
    warm, _ = agent_for("count", "warm up " * 10)
    await warm.run("warm up")  # tiktoken loaded before the heartbeat starts
    stop, worst = asyncio.Event(), [0.0]
    beat = asyncio.create_task(heartbeat(stop, worst))
    await asyncio.sleep(0.05)
    worst[0] = 0.0
    started, cpu_at_start = time.perf_counter(), time.process_time()
    outcome = "-"
    if case == "idle":
        await asyncio.sleep(0.3)
    else:
        agent, budget = agent_for(case, text)
        result = await agent.run("go", budget=budget)
        outcome = f"{result.status.value}/{result.reason.value}"
    wall = time.perf_counter() - started
    cpu_at_end = time.process_time()
    stop.set()
    await beat
    await asyncio.get_running_loop().shutdown_default_executor()  # counting threads return
    return {
        "worst_ms": worst[0] * 1000,
        "wall_ms": wall * 1000,
        "cpu_ms": (cpu_at_end - cpu_at_start) * 1000,
        "cpu_after_ms": (time.process_time() - cpu_at_end) * 1000,
        "outcome": outcome,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,5,20", help="tool output sizes in MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--text", choices=("rows", "minified", "letters"), default="rows")
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = args.cases.split(",")
    print(f"scheduler: {os.path.dirname(scheduler.__file__)}  text: {args.text}")
    print(
        f"{'case':<11} {'MB':>3}  worst gap ms (median, range)   wall ms    cpu ms"
        "  cpu after ms  outcome"
    )
    for case in cases:
        for megabytes in sizes if case != "idle" else [0]:
            text = make_text(megabytes, args.text) if case != "idle" else ""
            runs = [asyncio.run(measure(case, text)) for _ in range(args.repeat)]
            worst = sorted(r["worst_ms"] for r in runs)
            print(
                f"{case:<11} {megabytes:>3}  {statistics.median(worst):8.1f} "
                f"({worst[0]:.1f}-{worst[-1]:.1f}){'':<8} "
                f"{statistics.median(r['wall_ms'] for r in runs):8.0f} "
                f"{statistics.median(r['cpu_ms'] for r in runs):9.0f} "
                f"{statistics.median(r['cpu_after_ms'] for r in runs):13.0f}  "
                f"{runs[-1]['outcome']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
