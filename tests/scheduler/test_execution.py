"""Tool execution: timeouts (async and threaded), the breaker in a run, parallel calls,
confirmation, cancellation, the state machine."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from scheduler import (
    TRANSITIONS,
    AgentConfig,
    AgentStatus,
    Approval,
    BreakerState,
    InvalidTransition,
    RunState,
    TerminationReason,
    ToolTimeout,
    Trace,
)

from .conftest import FakeClock, builtin, scenario

S, R = AgentStatus, TerminationReason
HANG = {
    "name": "hang",
    "description": "Never returns.",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "behavior": {"hangs": True},
}


def calls(*ns: int) -> list[dict]:
    return [{"tool_calls": [{"name": "hang", "args": {"n": n}}]} for n in ns]


async def test_hung_async_tool_is_cut_at_its_timeout(harness_factory):
    h = harness_factory(scenario("hung", tools=[HANG], script=[*calls(1), {"content": "went on"}]))

    async def hang(n: int) -> None:
        await asyncio.Event().wait()

    agent = h.agent("hung", AgentConfig(tool_timeout=0.05), overrides={"hang": hang})
    started = time.perf_counter()
    result = await agent.run("go")
    elapsed = time.perf_counter() - started
    tool = result.steps[0].tool_results[0]
    assert (tool.status, tool.content) == ("timeout", "Error: tool 'hang' timed out after 0.05s")
    assert isinstance(tool.error, ToolTimeout) and tool.error.timeout_s == 0.05
    assert (result.status, result.content) == (S.COMPLETED, "went on")
    assert 0.05 <= elapsed < 1.0
    assert result.trace.spans("tool")[0].error is tool.error


async def test_hung_sync_tool_leaves_a_stuck_thread(harness_factory):
    h = harness_factory(scenario("hung", tools=[HANG], script=[*calls(1), {"content": "went on"}]))
    release = threading.Event()
    loop_thread = threading.get_ident()
    seen = []

    def hang(n: int) -> str:
        seen.append(threading.get_ident() != loop_thread)
        release.wait(5)
        return "late"

    agent = h.agent("hung", AgentConfig(tool_timeout=0.05), overrides={"hang": hang})
    result = await agent.run("go")
    assert result.steps[0].tool_results[0].status == "timeout"
    assert (result.status, seen, agent.executor.threads.stuck) == (S.COMPLETED, [True], 1)
    release.set()  # the thread returns at last; nobody wanted its result
    for _ in range(100):
        if agent.executor.threads.stuck == 0:
            break
        await asyncio.sleep(0.01)
    assert agent.executor.threads.stuck == 0


async def test_breaker_opens_after_timeouts_and_closes_after_cooldown(harness_factory):
    clock = FakeClock()
    h = harness_factory(
        scenario("flaky", tools=[HANG], script=[*calls(1, 2, 3, 4), {"content": "done"}])
    )
    executions = []

    async def hang(n: int) -> str:
        executions.append(n)
        if len(executions) <= 2:
            await asyncio.Event().wait()  # the first two calls hang
        return "recovered"

    config = AgentConfig(tool_timeout=0.02, breaker_threshold=2, breaker_cooldown_s=30, clock=clock)
    agent = h.agent("flaky", config, overrides={"hang": hang})
    # the cooldown passes (on the injected clock) before step 4
    agent.on("before_step", lambda *, state, step: clock.advance(30) if step == 4 else None)
    result = await agent.run("go")
    assert [s.tool_results[0].status for s in result.steps[:4]] == [
        "timeout",
        "timeout",
        "circuit_open",
        "ok",
    ]
    assert executions == [1, 2, 4]  # call 3 never reached the tool
    assert result.steps[2].tool_results[0].content == (
        "Error: tool 'hang' is temporarily unavailable (circuit open after 2 consecutive failures; "
        "retry in 30s). Do not call it again now."
    )
    breaker = agent.breakers["hang"]
    closed, opened, half = BreakerState.CLOSED, BreakerState.OPEN, BreakerState.HALF_OPEN
    assert (breaker.state, list(breaker.transitions)) == (
        closed,
        [(closed, opened), (opened, half), (half, closed)],
    )


async def test_parallel_calls_run_concurrently_and_keep_their_order(harness_factory):
    sc = builtin("parallel_tool_calls")
    h = harness_factory(sc)
    delays = {"get_weather": 0.06, "find_museum": 0.01, "find_restaurant": 0.03}
    finished = []

    def slow(name):
        async def handler(**kwargs):
            await asyncio.sleep(delays[name])
            finished.append(name)
            return {"tool": name}

        return handler

    overrides = {name: slow(name) for name in delays}
    result = await h.agent(sc.name, overrides=overrides).run(sc.user)
    # run one after another they would finish in the script's order (get_weather first); at
    # once, the shortest sleep ends first: the order is the proof, not a clock a busy host skews
    assert finished == ["find_museum", "find_restaurant", "get_weather"]
    assert [(m["tool_call_id"], m["content"]) for m in result.messages[3:6]] == [
        ("call_t0_0", '{"tool": "get_weather"}'),
        ("call_t0_1", '{"tool": "find_museum"}'),
        ("call_t0_2", '{"tool": "find_restaurant"}'),
    ]
    finished.clear()
    await h.agent(sc.name, AgentConfig(parallel_tool_calls=False), overrides=overrides).run(sc.user)
    assert finished == ["get_weather", "find_museum", "find_restaurant"]


REFUND = {
    "name": "refund",
    "description": "Refund an order.",
    "require_confirmation": True,
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
    "behavior": {"returns": "refunded"},
}
REFUND_SCRIPT = [
    {"tool_calls": [{"name": "refund", "args": {"order_id": "A1"}}]},
    {"content": "ok"},
]


async def test_denied_confirmation_is_reported_to_the_llm(harness_factory):
    h = harness_factory(scenario("refund", tools=[REFUND], script=REFUND_SCRIPT))
    asked = []

    async def approver(*, call, arguments, state):
        asked.append((call.name, arguments, state.status))
        return Approval(False, "amount too high")

    result = await h.agent("refund", approver=approver).run("refund A1")
    tool = result.steps[0].tool_results[0]
    assert (tool.status, tool.content) == (
        "denied",
        "Error: the user did not approve the call to 'refund': amount too high",
    )
    assert asked == [("refund", {"order_id": "A1"}, S.WAITING_CONFIRMATION)]
    assert h.calls == [] and result.status is S.COMPLETED
    assert h.bodies()[1]["messages"][-1]["content"] == tool.content
    assert result.transitions == [
        (S.IDLE, S.THINKING),
        (S.THINKING, S.EXECUTING),
        (S.EXECUTING, S.WAITING_CONFIRMATION),
        (S.WAITING_CONFIRMATION, S.EXECUTING),
        (S.EXECUTING, S.THINKING),
        (S.THINKING, S.COMPLETED),
    ]
    assert [(n, a) for n, _, a in result.trace.spans("tool")[0].events] == [
        ("confirmation", {"approved": False, "reason": "amount too high"})
    ]


async def test_approved_and_unanswerable_confirmations(harness_factory):
    h = harness_factory(scenario("refund", tools=[REFUND], script=REFUND_SCRIPT))
    yes = await h.agent("refund", approver=lambda **_: True).run("refund A1")
    assert (yes.steps[0].tool_results[0].content, h.calls) == (
        "refunded",
        [("refund", {"order_id": "A1"})],
    )
    nobody = await h.agent("refund").run("refund A1")
    assert nobody.steps[0].tool_results[0].content == (
        "Error: the user did not approve the call to 'refund': "
        "no approver is configured for tools that need confirmation"
    )

    def broken(**_):
        raise RuntimeError("approval service down")

    failed = await h.agent("refund", approver=broken).run("refund A1")
    assert failed.steps[0].tool_results[0].status == "denied"
    assert len(h.calls) == 1


async def test_cancel_ends_the_run_aborted(harness_factory):
    h = harness_factory(
        scenario("hung", tools=[HANG], script=[*calls(1), {"content": "never"}], status="aborted")
    )
    entered = asyncio.Event()

    async def hang(n: int) -> None:
        entered.set()
        await asyncio.Event().wait()

    agent = h.agent("hung", AgentConfig(tool_timeout=None), overrides={"hang": hang})
    task = asyncio.create_task(agent.run("go"))
    await entered.wait()
    assert agent.status is S.EXECUTING
    assert agent.cancel() == 1
    result = await task
    assert (result.status, result.reason, agent.status) == (S.ABORTED, R.CANCELLED, S.ABORTED)
    assert result.transitions[-1] == (S.EXECUTING, S.ABORTED)
    assert (
        result.content
        == "Stopped before a final answer (cancelled).\nNo tool results were gathered."
    )


async def test_cancellation_from_outside_propagates(harness_factory):
    h = harness_factory(
        scenario("hung", tools=[HANG], script=[*calls(1), {"content": "never"}], status="aborted")
    )
    finished = []

    async def hang(n: int) -> None:
        await asyncio.Event().wait()

    agent = h.agent("hung", AgentConfig(tool_timeout=None), overrides={"hang": hang})
    agent.on(
        "on_complete", lambda *, state, result: finished.append((result.status, result.reason))
    )
    task = asyncio.create_task(agent.run("go"))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == [(S.ABORTED, R.CANCELLED)] and agent.status is S.ABORTED


def test_transitions_are_enforced():
    state = RunState("a", [], Trace())
    with pytest.raises(InvalidTransition) as caught:
        state.transition(S.EXECUTING)
    assert str(caught.value) == "invalid transition idle -> executing; allowed from idle: thinking"
    state.transition(S.THINKING)
    state.transition(S.COMPLETED)
    with pytest.raises(InvalidTransition, match="allowed from completed: none"):
        state.transition(S.THINKING)
    assert state.transitions == [(S.IDLE, S.THINKING), (S.THINKING, S.COMPLETED)]
    assert {s: sorted(t) for s, t in TRANSITIONS.items()} == {
        S.IDLE: [S.THINKING],
        S.THINKING: sorted([S.EXECUTING, S.COMPLETED, S.FAILED, S.ABORTED]),
        S.EXECUTING: sorted([S.THINKING, S.WAITING_CONFIRMATION, S.COMPLETED, S.FAILED, S.ABORTED]),
        S.WAITING_CONFIRMATION: sorted([S.EXECUTING, S.FAILED, S.ABORTED]),
        S.COMPLETED: [],
        S.FAILED: [],
        S.ABORTED: [],
    }


async def test_customer_returns_transitions(harness_factory):
    h = harness_factory(builtin("customer_returns"))
    result = await h.agent("customer_returns").run("return A123")
    assert result.transitions == [
        (S.IDLE, S.THINKING),
        (S.THINKING, S.EXECUTING),
        (S.EXECUTING, S.THINKING),
        (S.THINKING, S.EXECUTING),
        (S.EXECUTING, S.THINKING),
        (S.THINKING, S.COMPLETED),
    ]
