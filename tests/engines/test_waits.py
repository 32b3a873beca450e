"""Waits by choice (bench.engines.kit.waits): a run's own sleeps are waits, not overhead.

Fakes built on ``raw`` retry the flaky tool with a backoff (asyncio, anyio, a thread's
``time.sleep``); the mock's scripted latency, a tool's scripted sleep and zero-length sleeps
are not waits; the real ``lc-create-agent-prod`` reports its ToolRetryMiddleware backoff as
waits. Assertions use the recorded intervals and the requested sleeps, never wall-clock
upper bounds.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import bench.engines.common as common
from bench.engines.kit import waits
from bench.engines.kit.runlog import RunLog, ToolExecution
from bench.engines.raw import RawEngine, RawPrepared
from bench.referee import LatencyProfile, MockLLM
from scenarios import Scenario
from tests.engines.conftest import run_once

session_loop = pytest.mark.asyncio(loop_scope="session")
BACKOFF_S = 0.05


@pytest.fixture(autouse=True, scope="module")
def sleeps_recorded() -> Iterator[None]:
    """The worker installs the accounting first thing; this process does it here."""
    was = waits.installed()
    waits.install()
    yield
    if not was:
        waits.uninstall()


@pytest.fixture
def opened_logs(monkeypatch) -> list[RunLog]:
    """The RunLogs the recording engines open (to look at the raw intervals)."""
    logs: list[RunLog] = []
    original = common.start_log

    def capture() -> Any:
        log, token = original()
        logs.append(log)
        return log, token

    monkeypatch.setattr(common, "start_log", capture)
    return logs


class Backoff(RawEngine):
    """``raw`` plus a tool retry: a failed call is retried twice after a backoff sleep."""

    name = "test-backoff"

    async def backoff(self) -> None:
        await asyncio.sleep(BACKOFF_S)

    async def _call_tool(self, p: RawPrepared, call: dict[str, Any]) -> str:
        for attempt in range(3):
            result = await super()._call_tool(p, call)
            if not result.startswith("Error:") or attempt == 2:
                return result
            await self.backoff()
        raise AssertionError("unreachable")


class AnyioBackoff(Backoff):
    name = "test-backoff-anyio"

    async def backoff(self) -> None:
        await anyio.sleep(BACKOFF_S)  # the openai SDK's retries sleep this way


class ThreadBackoff(Backoff):
    name = "test-backoff-thread"

    async def backoff(self) -> None:
        await asyncio.to_thread(time.sleep, BACKOFF_S)  # a sync retry in a worker thread


class Poller(RawEngine):
    """``raw`` that yields to the loop 50 times per tool call (``asyncio.sleep(0)``)."""

    name = "test-poller"

    async def _call_tool(self, p: RawPrepared, call: dict[str, Any]) -> str:
        for _ in range(50):
            await asyncio.sleep(0)
        return await super()._call_tool(p, call)


async def measured(engine: RawEngine, scenario: Scenario, latency: str = "zero", **ctx: Any):
    mock = MockLLM(scenarios={scenario.name: scenario}, latency=LatencyProfile.named(latency))
    try:
        return await run_once(engine, scenario, mock, **ctx)
    finally:
        await engine.aclose()


def overhead_parts_add_up(record: Any) -> None:
    expected = record.wall_ms - record.mock_latency_ms - record.tool_ms - record.waited_ms
    assert math.isclose(record.overhead_ms, expected, abs_tol=1e-9)


@pytest.mark.parametrize("engine_class", [Backoff, AnyioBackoff, ThreadBackoff])
@session_loop
async def test_a_backoff_is_a_wait_not_overhead(scenarios, opened_logs, engine_class):
    record = await measured(engine_class(), scenarios["tool_flaky"], latency="realistic")
    assert record.status == "completed", record.error
    # retried in the "tool node": the model sees the result at once
    assert (record.llm_calls, record.tool_calls) == (2, 3)
    assert record.mock_latency_ms > 0  # the mock's scripted latency: not a wait (below)
    (log,) = opened_logs
    assert len(log.waits) == 2 == record.wait_count  # the two backoffs, nothing else
    for start, end in log.waits:
        assert end - start >= BACKOFF_S * 0.99  # each one as long as it asked for
    assert record.waited_ms == pytest.approx(sum(e - s for s, e in log.waits) * 1000)
    assert record.waited_ms >= 2 * BACKOFF_S * 1000 * 0.99
    overhead_parts_add_up(record)
    assert record.overhead_ms <= record.wall_ms - record.mock_latency_ms - record.waited_ms
    row = record.to_row()
    assert row["waited_ms"] == record.waited_ms and row["overhead_ms"] == record.overhead_ms


@pytest.mark.parametrize("stream", [False, True])
@session_loop
async def test_the_mocks_scripted_latency_is_not_a_wait(scenarios, opened_logs, stream):
    scenario = scenarios["streaming_long_answer" if stream else "customer_returns"]
    record = await measured(RawEngine(), scenario, latency="realistic", stream_tokens=stream)
    assert record.status == "completed", record.error
    assert record.mock_latency_ms > 0
    (log,) = opened_logs
    assert log.waits == [] and (record.waited_ms, record.wait_count) == (0.0, 0)
    overhead_parts_add_up(record)


@session_loop
async def test_a_tools_scripted_sleep_is_tool_time_not_a_wait(scenarios, opened_logs):
    base = scenarios["single_tool"]
    tools = [
        t.model_copy(update={"behavior": t.behavior.model_copy(update={"latency_ms": 30})})
        for t in base.tools
    ]
    scenario = base.model_copy(update={"tools": tools})
    record = await measured(RawEngine(), scenario)
    assert record.status == "completed", record.error
    (log,) = opened_logs
    assert len(log.waits) == record.tool_calls >= 1  # each tool's sleep was seen ...
    assert record.tool_ms >= 30 * 0.99 * record.tool_calls
    assert (record.waited_ms, record.wait_count) == (0.0, 0)  # ... and is tool time only
    overhead_parts_add_up(record)


@session_loop
async def test_zero_length_sleeps_are_not_waits(scenarios, opened_logs):
    record = await measured(Poller(), scenarios["single_tool"])
    assert record.status == "completed", record.error
    (log,) = opened_logs
    assert log.waits == [] and (record.waited_ms, record.wait_count) == (0.0, 0)


@session_loop
async def test_sleeps_outside_a_run_are_not_recorded():
    started = time.perf_counter()
    await asyncio.sleep(0.001)
    time.sleep(0.001)
    assert time.perf_counter() - started >= 0.0019  # they still sleep


@session_loop
async def test_langchain_prod_reports_its_tool_retry_backoff_as_waits(
    engines, scenarios, mock, opened_logs
):
    """ToolRetryMiddleware(initial_delay=0.1, backoff_factor=2, jitter ±25 %): 2 backoffs."""
    scenario = scenarios["tool_flaky"]
    prod = await run_once(engines["lc-create-agent-prod"], scenario, mock)
    ours = await run_once(engines["scheduler"], scenario, mock)
    assert prod.status == ours.status == "completed", (prod.error, ours.error)
    assert (prod.llm_calls, prod.tool_calls) == (2, 3)
    assert (ours.llm_calls, ours.tool_calls) == (4, 3)
    assert prod.prompt_tokens < ours.prompt_tokens  # one LLM round trip fewer, twice over
    prod_log = opened_logs[0]
    assert prod.wait_count == 2 == len(prod_log.waits)
    first, second = sorted(end - start for start, end in prod_log.waits)
    assert first >= 0.1 * 0.75 * 0.99 and second >= 0.2 * 0.75 * 0.99
    assert prod.waited_ms >= (0.1 + 0.2) * 0.75 * 1000 * 0.99
    overhead_parts_add_up(prod)
    assert (ours.waited_ms, ours.wait_count) == (0.0, 0)


def test_waited_ms_is_the_union_of_waits_outside_tool_bodies():
    log = RunLog()
    log.tools.append(ToolExecution("t", {}, started=10.0, ended=10.5, ok=True))
    log.waits += [
        (1.0, 1.2),  # 200 ms
        (1.1, 1.3),  # overlaps the first: +100 ms
        (10.1, 10.2),  # inside the tool: tool time already
        (10.4, 10.6),  # half inside: +100 ms
        (20.0, 21.0),  # after the run's end (closed at 20.5): +500 ms
    ]
    log.closed = 20.5
    assert log.waited_ms() == pytest.approx(900.0)
    assert log.wait_count() == 4
    assert RunLog().waited_ms() == 0.0
