"""One agent serving many requests (issue 14, points 10-12): run handles, breakers."""

from __future__ import annotations

import asyncio

import pytest

from scheduler import (
    AgentConfig,
    AgentStatus,
    BreakerState,
    ConfigError,
    LightweightAgent,
    RunFinished,
    RunHandle,
    TerminationReason,
    ToolInputError,
    tool,
)

from .conftest import FakeClock
from .faults import RoutingLLM, ask

S, R = AgentStatus, TerminationReason


@pytest.fixture
async def llm():
    routing = RoutingLLM()
    yield routing
    await routing.aclose()


# -- point 10: per-run handles; agent.cancel() is "cancel all" ---------------------------------


async def test_p10_a_handle_cancels_its_own_run_only(llm):
    gates = {"a": asyncio.Event(), "b": asyncio.Event()}
    entered = {"a": asyncio.Event(), "b": asyncio.Event()}

    @tool
    async def wait(who: str) -> str:
        """Wait for the gate."""
        entered[who].set()
        await gates[who].wait()
        return f"{who} released"

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[wait])
    a, b = RunHandle(), RunHandle("request-b")
    run_a = asyncio.create_task(agent.run(ask("wait", who="a"), handle=a))
    run_b = asyncio.create_task(agent.run(ask("wait", who="b"), handle=b))
    await entered["a"].wait()
    await entered["b"].wait()
    assert (a.status, b.status, b.id, len(a.id) >= 8, a.id != b.id) == (
        S.EXECUTING,
        S.EXECUTING,
        "request-b",
        True,
        True,
    )
    assert set(agent.runs) == {a, b}
    assert a.cancel() is True
    result_a = await run_a
    gates["b"].set()
    result_b = await run_b
    assert (result_a.status, result_a.reason, result_a.run_id) == (S.ABORTED, R.CANCELLED, a.id)
    assert (result_b.status, result_b.content, result_b.run_id) == (
        S.COMPLETED,
        "done: b released",
        "request-b",
    )
    assert (a.status, b.status, a.result is result_a, agent.runs) == (
        S.ABORTED,
        S.COMPLETED,
        True,
        (),
    )
    assert a.cancel() is False  # already over
    with pytest.raises(ConfigError, match="use one RunHandle per run"):
        await agent.run(ask("wait", who="b"), handle=a)


async def test_p10_stream_takes_a_handle_too(llm):
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[echo])
    handle = RunHandle()
    events = [e async for e in agent.stream(ask("echo", text="hi"), handle=handle)]
    assert isinstance(events[-1], RunFinished)
    assert (events[-1].result.run_id, handle.status) == (handle.id, S.COMPLETED)
    assert events[0].run_id == handle.id


# -- point 11: a cancelled half-open trial does not wedge the breaker -----------------------


async def test_p11_a_cancelled_trial_call_releases_the_half_open_breaker(llm):
    clock = FakeClock()
    mode = {"now": "fail"}
    entered = asyncio.Event()

    @tool
    async def inventory(sku: str) -> str:
        """Look up stock."""
        if mode["now"] == "fail":
            raise ConnectionError("inventory service down")
        if mode["now"] == "hang":
            entered.set()
            await asyncio.Event().wait()
        return f"{sku}: 3 in stock"

    config = AgentConfig(token_budget=None, breaker_threshold=1, breaker_cooldown_s=10, clock=clock)
    agent = LightweightAgent(llm.client(), config, tools=[inventory])
    assert (await agent.run(ask("inventory", sku="S1"))).steps[0].tool_results[0].status == "error"
    assert agent.breakers["inventory"].state is BreakerState.OPEN
    clock.advance(10)
    mode["now"] = "hang"
    disconnected = asyncio.create_task(agent.run(ask("inventory", sku="S1")))
    await entered.wait()  # the half-open trial call is running...
    disconnected.cancel()  # ... and the client goes away
    with pytest.raises(asyncio.CancelledError):
        await disconnected
    mode["now"] = "ok"
    result = await agent.run(ask("inventory", sku="S1"))
    assert (result.steps[0].tool_results[0].status, result.content) == (
        "ok",
        "done: S1: 3 in stock",
    )
    assert agent.breakers["inventory"].state is BreakerState.CLOSED


# -- point 12: a caller's mistakes do not open the circuit for everyone ----------------------


async def test_p12_caller_errors_do_not_count_as_dependency_failures(llm):
    @tool
    def query_order(order_id: str) -> str:
        """Look up an order."""
        if not order_id.startswith("A"):
            raise ToolInputError(f"order {order_id} not found")
        return f"order {order_id}: delivered"

    agent = LightweightAgent(
        llm.client(), AgentConfig(token_budget=None, breaker_threshold=3), tools=[query_order]
    )
    for _ in range(3):  # one caller's bad input, three times
        bad = await agent.run(ask("query_order", order_id="ZZ1"))
        tool_result = bad.steps[0].tool_results[0]
        assert (tool_result.status, tool_result.content) == (
            "input_error",
            "Error: order ZZ1 not found",
        )
    breaker = agent.breakers["query_order"]
    assert (breaker.state, breaker.failures) == (BreakerState.CLOSED, 0)
    other = await agent.run(ask("query_order", order_id="A123"))  # another caller
    assert other.content == "done: order A123: delivered"
