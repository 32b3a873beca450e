"""Hooks (order, veto, rewrite, errors recorded) and the streaming API (events, TTFT)."""

from __future__ import annotations

import pytest

from bench.referee import LatencyProfile
from scheduler import (
    AgentConfig,
    AgentStatus,
    ConfigError,
    ContentDelta,
    HookError,
    Rewrite,
    RunFinished,
    RunStarted,
    StatusChanged,
    StepFinished,
    TerminationReason,
    ToolCallFinished,
    ToolCallStarted,
    Veto,
    format_event,
)

from .conftest import builtin

S, R = AgentStatus, TerminationReason
USER = builtin("customer_returns").user
ANSWER = builtin("customer_returns").script[-1].content


@pytest.fixture
def h(harness_factory):
    return harness_factory(builtin("customer_returns"))


async def test_hooks_fire_in_order_with_typed_arguments(h):
    seen = []
    agent = h.agent("customer_returns")
    agent.on("before_step", lambda *, state, step: seen.append(("before_step", step, state.status)))
    agent.on("before_llm", lambda *, state, messages: seen.append(("before_llm", len(messages))))
    agent.on(
        "after_llm", lambda *, state, response: seen.append(("after_llm", response.finish_reason))
    )

    async def before_tool(*, state, call, arguments):
        seen.append(("before_tool", call.name, arguments))

    agent.on("before_tool", before_tool)
    agent.on(
        "after_tool",
        lambda *, state, result: seen.append(("after_tool", result.name, result.status)),
    )
    agent.on("after_step", lambda *, state, step: seen.append(("after_step", step.number)))
    agent.on("on_complete", lambda *, state, result: seen.append(("on_complete", result.status)))
    agent.on("on_error", lambda *, state, error: seen.append(("on_error", error)))
    result = await agent.run(USER)
    assert result.hook_errors == []
    assert seen == [
        ("before_step", 1, S.THINKING),
        ("before_llm", 2),
        ("after_llm", "tool_calls"),
        ("before_tool", "search_knowledge_base", {"query": "return policy"}),
        ("after_tool", "search_knowledge_base", "ok"),
        ("after_step", 1),
        ("before_step", 2, S.THINKING),
        ("before_llm", 4),
        ("after_llm", "tool_calls"),
        ("before_tool", "query_order", {"order_id": "A123"}),
        ("after_tool", "query_order", "ok"),
        ("after_step", 2),
        ("before_step", 3, S.THINKING),
        ("before_llm", 6),
        ("after_llm", "stop"),
        ("after_step", 3),
        ("on_complete", S.COMPLETED),
    ]


async def test_before_tool_can_veto_or_rewrite(h):
    agent = h.agent("customer_returns")

    def policy(*, state, call, arguments):
        if call.name == "query_order":
            return Veto("orders are read-only today")
        return Rewrite({"query": arguments["query"].upper()})

    agent.on("before_tool", policy)
    result = await agent.run(USER)
    assert h.calls == [("search_knowledge_base", {"query": "RETURN POLICY"})]
    search, order = result.steps[0].tool_results[0], result.steps[1].tool_results[0]
    assert (search.arguments, order.status, order.content) == (
        {"query": "RETURN POLICY"},
        "vetoed",
        "Error: the call to 'query_order' was refused: orders are read-only today",
    )
    assert result.trace.spans("tool")[0].attributes["scheduler.tool.rewritten"] is True


async def test_a_rewrite_is_validated_again(h):
    agent = h.agent("customer_returns").on("before_tool", lambda **_: Rewrite({"query": 42}))
    result = await agent.run(USER)
    assert result.steps[0].tool_results[0].content == (
        "Error: invalid arguments for 'search_knowledge_base': query: 42 is not of type 'string'"
    )
    assert h.calls == []


async def test_after_tool_can_replace_what_the_llm_reads(h):
    agent = h.agent("customer_returns").on(
        "after_tool", lambda *, state, result: f"[redacted {result.name}]"
    )
    result = await agent.run(USER)
    assert [m["content"] for m in result.messages if m["role"] == "tool"] == [
        "[redacted search_knowledge_base]",
        "[redacted query_order]",
    ]


async def test_a_raising_hook_is_recorded_not_fatal(h):
    def broken(*, state, step):
        raise ValueError(f"bad step {step.number}")

    agent = h.agent("customer_returns").on("after_step", broken)
    result = await agent.run(USER)
    assert (result.status, result.content) == (S.COMPLETED, ANSWER)
    assert [(e.event, e.hook_name, str(e.cause)) for e in result.hook_errors] == [
        ("after_step", "test_a_raising_hook_is_recorded_not_fatal.<locals>.broken", f"bad step {n}")
        for n in (1, 2, 3)
    ]
    step = result.trace.spans("step")[0]
    assert [(name, attrs) for name, _, attrs in step.events] == [
        (
            "hook_error",
            {
                "hook.event": "after_step",
                "hook.name": "test_a_raising_hook_is_recorded_not_fatal.<locals>.broken",
                "exception.type": "ValueError",
                "exception.message": "bad step 1",
            },
        )
    ]
    assert "[hook_error] {hook.event: after_step" in result.trace.render()


async def test_a_raising_hook_can_be_made_fatal(h):
    async def broken(*, state, messages):
        raise RuntimeError("policy service down")

    agent = h.agent("customer_returns", AgentConfig(raise_hook_errors=True)).on(
        "before_llm", broken
    )
    result = await agent.run(USER)
    assert (result.status, result.reason, result.llm_calls) == (S.FAILED, R.HOOK_ERROR, 0)
    assert isinstance(result.error, HookError) and result.error.event == "before_llm"
    assert result.detail.endswith("on before_llm raised RuntimeError: policy service down")


def test_unknown_hook_event(h):
    with pytest.raises(
        ConfigError, match="unknown hook event 'before_tools'; valid events: before_step"
    ):
        h.agent("customer_returns").on("before_tools", print)


async def test_stream_events(harness_factory):
    h = harness_factory(builtin("customer_returns"), latency=LatencyProfile(ttft_ms=20))
    events = [e async for e in h.agent("customer_returns").stream(USER)]
    kinds = [type(e).__name__ for e in events]
    deltas = [e for e in events if isinstance(e, ContentDelta)]
    compact = [
        k
        for i, k in enumerate(kinds)
        if not (k == "ContentDelta" and kinds[i - 1] == "ContentDelta")
    ]
    assert compact == [
        "RunStarted",
        "StatusChanged",
        "StatusChanged",
        "ToolCallStarted",
        "ToolCallFinished",
        "StepFinished",
        "StatusChanged",
        "StatusChanged",
        "ToolCallStarted",
        "ToolCallFinished",
        "StepFinished",
        "StatusChanged",
        "ContentDelta",
        "StepFinished",
        "StatusChanged",
        "RunFinished",
    ]
    result = events[-1].result
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert "".join(d.text for d in deltas) == result.content == ANSWER
    assert all(h.mock.requests[i].stream for i in range(3))
    # time to first token: three requests, each 20 ms before its first chunk
    assert result.ttft_s == pytest.approx(deltas[0].at_s, abs=0.005)
    assert 0.06 <= result.ttft_s < result.duration_s
    assert all(span.attributes["scheduler.ttft_s"] >= 0.02 for span in result.trace.spans("llm"))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.step, e.name, e.arguments) for e in started] == [
        (1, "search_knowledge_base", {"query": "return policy"}),
        (2, "query_order", {"order_id": "A123"}),
    ]
    finished = [e.result.status for e in events if isinstance(e, ToolCallFinished)]
    steps = [e.step.number for e in events if isinstance(e, StepFinished)]
    statuses = [(e.old, e.new) for e in events if isinstance(e, StatusChanged)]
    assert (finished, steps, statuses) == (["ok", "ok"], [1, 2, 3], result.transitions)
    assert format_event(events[-1]).endswith("finished: completed (stop)")


async def test_stream_closed_early_cancels_the_run(harness_factory):
    h = harness_factory(builtin("customer_returns"), latency=LatencyProfile(ttft_ms=20))
    agent = h.agent("customer_returns")
    stream = agent.stream(USER)
    async for event in stream:
        if isinstance(event, ToolCallStarted):
            break
    await stream.aclose()
    assert agent.status is S.ABORTED
    assert len(h.mock.requests) == 2  # the second LLM call was in flight, the third never made
