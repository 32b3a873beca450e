"""bench.engines.kit.tools (scenario tool behaviour) and bench.engines.kit.runlog (the per-run log)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from bench.engines.kit.runlog import end_log, start_log
from bench.engines.kit.tools import (
    ScenarioTool,
    ToolFailure,
    allow_handlers,
    pad_to_size,
    release_hung_threads,
)
from scenarios import HandlerPolicy, ToolDef

ASYNC = pytest.mark.asyncio(loop_scope="session")


def make(behavior: dict, **extra) -> ScenarioTool:
    return ScenarioTool(
        ToolDef.model_validate(
            {
                "name": "probe",
                "description": "A probe.",
                "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
                "behavior": behavior,
                **extra,
            }
        )
    )


def add(x: int) -> dict:
    return {"sum": x + 1}


async def async_add(x: int) -> str:
    await asyncio.sleep(0)
    return f"async {x}"


@ASYNC
async def test_returns_the_same_json_text_every_time_and_records_it():
    tool = make({"returns": {"city": "Zürich", "n": 1}})
    log, token = start_log()
    try:
        first = await tool.acall(x=1)
        second = tool.call(x=2)
    finally:
        end_log(token)
    assert first == second == '{"city": "Zürich", "n": 1}'
    assert [(e.name, e.args, e.ok, e.error) for e in log.tools] == [
        ("probe", {"x": 1}, True, None),
        ("probe", {"x": 2}, True, None),
    ]


@ASYNC
async def test_raises_and_fail_times_count_per_run():
    tool = make({"returns": {"ok": True}, "fail_times": 2, "fail_message": "reset by peer"})
    for _ in range(2):  # a second run starts counting again
        log, token = start_log()
        try:
            outcomes = []
            for _ in range(3):
                try:
                    outcomes.append(await tool.acall())
                except ToolFailure as exc:
                    outcomes.append(str(exc))
        finally:
            end_log(token)
        assert outcomes == ["reset by peer", "reset by peer", '{"ok": true}']
        assert [e.ok for e in log.tools] == [False, False, True]
        assert log.tools[0].error == "ToolFailure: reset by peer"
    with pytest.raises(ToolFailure, match="upstream down"):
        await make({"raises": "upstream down"}).acall()


@ASYNC
async def test_a_hung_async_tool_is_cancelled_by_a_timeout_and_recorded():
    tool = make({"hangs": True})
    log, token = start_log()
    try:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await tool.acall(x=1)
    finally:
        end_log(token)
    [execution] = log.tools
    assert (execution.ok, execution.error) == (False, "cancelled")
    assert 40 <= execution.duration_ms < 500


def test_a_hung_sync_tool_blocks_its_thread_until_released():
    tool = make({"hangs": True})
    outcome: list[str] = []

    def worker() -> None:
        try:
            tool.call()
        except Exception as exc:
            outcome.append(type(exc).__name__)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    thread.join(0.1)
    assert thread.is_alive()  # no timeout can stop it
    release_hung_threads()
    thread.join(2)
    assert not thread.is_alive() and outcome == ["ToolHangReleased"]


@ASYNC
async def test_latency_is_slept_and_counted_as_tool_time():
    tool = make({"returns": {}, "latency_ms": 30})
    log, token = start_log()
    try:
        started = time.perf_counter()
        await asyncio.gather(tool.acall(), tool.acall(), tool.acall())
        elapsed_ms = (time.perf_counter() - started) * 1000
    finally:
        end_log(token)
    assert all(e.duration_ms >= 29 for e in log.tools)
    # three overlapping calls: tool time is their union, not their sum
    assert 29 <= log.tool_time_ms() <= elapsed_ms


@pytest.mark.parametrize("size_kb", [1, 4.5, 64])
def test_padding_reaches_the_size_exactly(size_kb):
    text = pad_to_size({"service": "checkout", "note": "ü"}, size_kb)
    assert len(text.encode()) == int(size_kb * 1024)
    assert json.loads(text)["service"] == "checkout"


@pytest.fixture
def trusted_handlers():
    allow_handlers(HandlerPolicy(trust_all=True))
    yield
    allow_handlers(HandlerPolicy())


def test_a_handler_is_refused_unless_allowed():
    with pytest.raises(ValueError, match="refused: a handler is Python code that runs as you"):
        make({}, handler="tests.engines.test_tools_and_recording:add")


@ASYNC
async def test_handlers_sync_and_async_give_the_result(trusted_handlers):
    sync_tool = make({}, handler="tests.engines.test_tools_and_recording:add")
    async_tool = make({}, handler="tests.engines.test_tools_and_recording:async_add")
    assert await sync_tool.acall(x=1) == '{"sum": 2}'
    assert sync_tool.call(x=2) == '{"sum": 3}'
    assert await async_tool.acall(x=3) == "async 3"
    with pytest.raises(TypeError, match="async handler"):
        async_tool.call(x=4)


def test_outside_a_run_nothing_is_recorded_and_nothing_breaks():
    tool = make({"returns": [1, 2]})
    assert tool.call() == "[1, 2]"
