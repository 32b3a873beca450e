"""Lifecycle and resources (issue 14, points 6-9): threads, HTTP pools, token caches, bulkheads."""

from __future__ import annotations

import asyncio
import gc
import threading
import tracemalloc

import httpx
import pytest

import scheduler.llm
import scheduler.tokens
from scheduler import AgentConfig, AgentStatus, LightweightAgent, ToolSpec, tool

from .faults import BASE_URL, RoutingLLM, ask, completion

S = AgentStatus


@pytest.fixture
async def llm():
    routing = RoutingLLM()
    yield routing
    await routing.aclose()


def tool_threads() -> int:
    return sum(t.name.startswith("scheduler-tool") for t in threading.enumerate())


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


# -- point 6: agents share one bounded pool; aclose() releases what an agent holds ------------


async def test_p6_one_agent_per_request_does_not_leak_threads(llm):
    before = tool_threads()
    for i in range(40):  # a service that builds an agent per request
        agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[echo])
        result = await agent.run(ask("echo", text=f"request {i}"))
        assert (result.status, result.content) == (S.COMPLETED, f"done: request {i}")
    assert tool_threads() - before <= 2  # the shared pool grew only as far as it was needed


async def test_p6_async_with_closes_the_agent_and_its_client():
    seen = []
    transport = httpx.MockTransport(lambda request: seen.append(1) or completion("hi"))
    llm = scheduler.llm.OpenAIChatClient(base_url=BASE_URL, model="m", transport=transport)
    async with LightweightAgent(llm, AgentConfig(token_budget=None)) as agent:
        assert (await agent.run("q")).content == "hi"
        pool = llm._own
        assert pool is not None and not pool.is_closed
    assert pool.is_closed and llm._own is None and seen == [1]


# -- point 7: run_sync() closes the HTTP pool it opened -------------------------------------


def test_p7_run_sync_closes_the_http_client_it_created(monkeypatch):
    opened: list[httpx.AsyncClient] = []

    class Recorded(httpx.AsyncClient):
        def __init__(self, **kwargs):
            kwargs["transport"] = httpx.MockTransport(lambda request: completion("hi"))
            super().__init__(**kwargs)
            opened.append(self)

    monkeypatch.setattr(scheduler.llm.httpx, "AsyncClient", Recorded)
    llm = scheduler.llm.OpenAIChatClient(base_url=BASE_URL, model="m")
    agent = LightweightAgent(llm, AgentConfig(token_budget=None))
    assert [agent.run_sync("q").content for _ in range(3)] == ["hi", "hi", "hi"]
    assert (len(opened), [c.is_closed for c in opened]) == (3, [True, True, True])


# -- point 8: no process-wide cache of texts; large texts counted off the event loop ---------


async def test_p8_finished_runs_leave_no_counted_text_behind(llm):
    @tool
    def report(n: int) -> str:
        """A large, different report each time."""
        return f"report {n}: " + " ".join(f"line{n}x{i}" for i in range(20_000))  # ~250 KB

    agent = LightweightAgent(
        llm.client(), AgentConfig(token_budget=10_000_000, token_counting="exact"), tools=[report]
    )
    assert (await agent.run(ask("report", n=-1))).ok  # warm: tokenizer loaded, pool started
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for n in range(24):
            result = await agent.run(ask("report", n=n))
            assert result.steps[0].tool_results[0].content.startswith(f"report {n}: ")
            assert result.steps[1].input_tokens > 40_000  # the report was counted
        del result
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert held < 1_500_000, f"{held:,} bytes still held after the runs ended"  # ~6 MB if cached


async def test_p8_a_large_text_is_counted_off_the_event_loop(llm, monkeypatch):
    counted_on: list[str] = []
    real = scheduler.tokens.count_piece_tokens

    def spy(text: str) -> int:  # large texts are counted piece by piece
        counted_on.append(threading.current_thread().name)
        return real(text)

    monkeypatch.setattr(scheduler.tokens, "count_piece_tokens", spy)

    @tool
    def dump() -> str:
        """A 2 MB dump."""
        return "word " * 400_000

    config = AgentConfig(token_budget=10_000_000, token_counting="exact")
    agent = LightweightAgent(llm.client(), config, tools=[dump])
    result = await agent.run(ask("dump"))
    assert result.ok and result.steps[1].input_tokens > 400_000
    assert len(counted_on) > 100 and threading.main_thread().name not in counted_on


# -- point 9: a hung sync tool cannot starve the healthy ones (bulkhead per tool) -------------


async def test_p9_a_hung_sync_tool_cannot_take_every_worker(llm):
    release = threading.Event()

    def hang(n: int) -> str:
        release.wait(20)
        return "late"

    def healthy() -> str:
        return "fine"

    hung = ToolSpec(
        "hang",
        "Hangs.",
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        hang,
        timeout=0.2,
    )
    ok = ToolSpec("healthy", "Works.", {"type": "object", "properties": {}}, healthy, timeout=5)
    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[hung, ok])
    try:
        stuck = await asyncio.gather(*(agent.run(ask("hang", n=n)) for n in range(40)))
        assert {r.steps[0].tool_results[0].status for r in stuck} == {"timeout"}
        result = await agent.run(ask("healthy"))
        assert (result.steps[0].tool_results[0].status, result.content) == ("ok", "done: fine")
    finally:
        release.set()


async def test_a_finished_run_is_freed_without_the_cycle_collector(llm):
    from scheduler import RunState, Span, StepRecord

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[echo])
    assert (await agent.run(ask("echo", text="warm"))).ok
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for i in range(5):
            assert (await agent.run(ask("echo", text=f"run {i}"))).ok
        gc.collect()
        kinds = {
            type(o).__name__ for o in gc.garbage if isinstance(o, Span | StepRecord | RunState)
        }
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert kinds == set()  # runs are freed by reference counting as soon as they are dropped


async def test_a_sync_tool_sees_the_callers_context_variables():
    """A request id set by the service (a contextvar) reaches a sync tool on a worker
    thread, as ``asyncio.to_thread`` would carry it (it was lost before)."""
    import contextvars

    from scheduler.pool import ToolThreadPool

    request_id: contextvars.ContextVar[str] = contextvars.ContextVar(
        "request_id", default="<unset>"
    )
    pool = ToolThreadPool(max_workers=2)
    try:
        request_id.set("req-42")
        job = pool.submit(lambda: request_id.get(), {}, key="whoami")
        assert await job.future == "req-42"
    finally:
        pool.shutdown()
