"""Broken streams and transports (issue 14, points 1-5 and 16), against scripted servers.

Each test names the point it guards. The servers are built here (``faults.LLMScript``): a
stream that runs long, stalls, ends without a finish reason, drops the connection, sends a
corrupt chunk; a Retry-After beyond the cap; a gzip body that does not decode.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from scheduler import (
    AgentConfig,
    AgentStatus,
    ContentDelta,
    LightweightAgent,
    LLMResponseError,
    LLMStatusError,
    LLMStreamInterrupted,
    LLMTimeout,
    RunFinished,
    StreamInterrupted,
    TerminationReason,
    ToolSpec,
)

from .faults import (
    LLMScript,
    completion,
    gzip_garbage,
    status,
    stream,
    text_chunks,
    tool_call,
    tool_chunks,
)

S, R = AgentStatus, TerminationReason
OPENING = ["Your ", "refund ", "is ", "on ", "its ", "way."]


@pytest.fixture
async def script_factory():
    made: list[LLMScript] = []

    def make(*responses):
        made.append(LLMScript(*responses))
        return made[-1]

    yield make
    for script in made:
        await script.aclose()


def agent_over(script: LLMScript, *, tools=(), client=None, **config) -> LightweightAgent:
    config.setdefault("token_budget", None)
    return LightweightAgent(
        script.client(**(client or {})), AgentConfig(name="t", **config), tools=tools
    )


async def consume(agent: LightweightAgent, question: str = "q"):
    """Run through ``agent.stream()``: (the text the consumer saw, the events, the result)."""
    events = [event async for event in agent.stream(question)]
    seen = "".join(e.text for e in events if isinstance(e, ContentDelta))
    assert isinstance(events[-1], RunFinished)
    return seen, events, events[-1].result


# -- point 1: the idle timeout between chunks and the overall deadline are two knobs -------


async def test_p1_a_long_stream_that_keeps_talking_is_not_cut(script_factory):
    # six chunks 0.06 s apart: 0.36 s in all, longer than llm_timeout, never silent that long
    parts = [p for piece in text_chunks(*OPENING) for p in (0.06, piece)]
    script = script_factory(stream(*parts))
    seen, _, result = await consume(agent_over(script, llm_timeout=0.2))
    assert (result.status, result.reason, result.content) == (S.COMPLETED, R.STOP, "".join(OPENING))
    assert (seen, len(script.requests)) == ("".join(OPENING), 1)  # the opening once, no retry


async def test_p1_a_stall_after_delivered_text_fails_without_a_splice(script_factory):
    stalled = stream(*text_chunks("Your ", "refund ", finish=None, done=False), 30.0)
    script = script_factory(stalled, stream(*text_chunks("Something ", "else.")))
    seen, events, result = await consume(agent_over(script, llm_timeout=0.1))
    assert (result.status, result.reason) == (S.FAILED, R.LLM_ERROR)
    assert isinstance(result.error, LLMStreamInterrupted)
    assert seen == "Your refund "  # never "Your refund Something else."
    assert (len(script.requests), script.unplayed) == (1, 1)  # not retried
    interrupted = [e for e in events if isinstance(e, StreamInterrupted)]
    assert [(e.step, e.delivered_chars, type(e.error)) for e in interrupted] == [
        (1, len("Your refund "), LLMStreamInterrupted)
    ]
    assert "12 characters" in str(result.error) and "no data for 0.1s" in str(result.error)


async def test_p1_in_run_a_stalled_stream_is_retried_whole(script_factory):
    stalled = stream(*text_chunks("Your ", "refund ", finish=None, done=False), 30.0)
    script = script_factory(stalled, stream(*text_chunks(*OPENING)))
    result = await agent_over(script, llm_timeout=0.1, stream=True).run("q")
    assert (result.status, result.content, len(script.requests)) == (
        S.COMPLETED,
        "".join(OPENING),
        2,
    )
    assert result.usage.retries == 1


async def test_p1_the_overall_deadline_is_its_own_knob(script_factory):
    parts = [p for piece in text_chunks(*OPENING) for p in (0.05, piece)]
    script = script_factory(stream(*parts))
    result = await agent_over(script, llm_timeout=1.0, llm_deadline=0.12, stream=True).run("q")
    assert (result.status, result.reason, type(result.error)) == (S.FAILED, R.LLM_ERROR, LLMTimeout)
    assert str(result.error) == "LLM call exceeded its deadline of 0.12s"
    assert len(script.requests) == 1  # no time left for a retry


# -- point 2: a stream without a finish reason is an error ----------------------------------


async def test_p2_a_truncated_text_stream_is_not_a_completed_answer(script_factory):
    cut = stream(*text_chunks("Your ", "refu", finish=None, done=False))
    script = script_factory(cut, cut, cut, cut)
    result = await agent_over(script, stream=True).run("q")
    assert (result.status, result.reason, result.content) == (S.FAILED, R.LLM_ERROR, None)
    assert isinstance(result.error, LLMResponseError)
    assert str(result.error) == (
        "the stream ended without a finish reason (truncated) (after 4 attempts)"
    )


async def test_p2_a_cut_off_tool_call_is_never_executed(script_factory):
    calls = []

    def lookup(order_id: str = "A1") -> str:
        calls.append(order_id)
        return "found"

    spec = ToolSpec(
        "lookup",
        "Look an order up.",
        {"type": "object", "properties": {"order_id": {"type": "string"}}},
        lookup,
    )
    cut = stream(*tool_chunks("lookup", [], finish=None))
    script = script_factory(
        cut,
        stream(*tool_chunks("lookup", ['{"order_id": ', '"B7"}'])),
        stream(*text_chunks("Done.")),
    )
    result = await agent_over(script, tools=[spec], stream=True).run("q")
    assert (result.status, result.content, calls) == (S.COMPLETED, "Done.", ["B7"])


# -- point 3: a dropped connection or a corrupt chunk is retried while nothing was delivered --


@pytest.mark.parametrize(
    "fault",
    [
        httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
        b"data: {not json\n\n",
    ],
    ids=["dropped", "corrupt"],
)
async def test_p3_mid_stream_failures_are_retried_in_run(script_factory, fault):
    broken = stream(*text_chunks("Your ", "refund ", finish=None, done=False), fault)
    script = script_factory(broken, stream(*text_chunks(*OPENING)))
    result = await agent_over(script, stream=True).run("q")
    assert (result.status, result.reason, result.content) == (S.COMPLETED, R.STOP, "".join(OPENING))
    assert (len(script.requests), result.usage.retries) == (2, 1)


async def test_p3_after_delivery_they_fail_and_the_consumer_is_told(script_factory):
    broken = stream(*text_chunks("Your ", finish=None, done=False), b"data: {not json\n\n")
    script = script_factory(broken, stream(*text_chunks(*OPENING)))
    seen, events, result = await consume(agent_over(script))
    assert (result.status, seen, len(script.requests)) == (S.FAILED, "Your ", 1)
    after_text = [type(e).__name__ for e in events if not isinstance(e, ContentDelta)][-3:]
    assert after_text == ["StreamInterrupted", "StatusChanged", "RunFinished"]


# -- point 4: a Retry-After beyond the cap is a failure that says the wait -------------------


async def test_p4_retry_after_beyond_the_cap_is_not_ignored(script_factory):
    script = script_factory(status(429, "slow down", **{"retry-after": "120"}), completion())
    result = await agent_over(script, client={"max_retry_after_s": 60}).run("q")
    assert (result.status, result.reason, type(result.error)) == (
        S.FAILED,
        R.LLM_ERROR,
        LLMStatusError,
    )
    assert result.error.retry_after == 120.0
    assert str(result.error) == (
        "HTTP 429: slow down (the server asked to retry after 120s, "
        "more than max_retry_after_s=60: not retried)"
    )
    assert (script.sleeps, len(script.requests)) == ([], 1)


# -- point 5: a body that does not decode is an LLMError, in run() and in stream() -----------


async def test_p5_a_decoding_error_never_escapes(script_factory):
    script = script_factory(*[gzip_garbage] * 4)
    result = await agent_over(script).run("q")
    assert (result.status, result.reason, type(result.error)) == (
        S.FAILED,
        R.LLM_ERROR,
        LLMResponseError,
    )
    assert str(result.error).startswith("the response body could not be decoded: DecodingError")
    script = script_factory(*[gzip_garbage] * 4)
    _, _, streamed = await consume(agent_over(script))
    assert (streamed.status, type(streamed.error)) == (S.FAILED, LLMResponseError)


# -- point 16: retries of a call that failed in the end are counted ---------------------------


async def test_p16_retries_of_a_failed_call_are_counted(script_factory):
    script = script_factory(*[status(500, "down")] * 4)
    result = await agent_over(script, client={"max_retries": 3}).run("q")
    assert (result.status, result.error.attempts, result.usage.retries) == (S.FAILED, 4, 3)
    assert (result.usage.requests, len(script.requests)) == (0, 4)


async def test_client_errors_fail_at_once(script_factory):
    for code in (400, 401, 404):
        script = script_factory(status(code, "no"), completion())
        result = await agent_over(script).run("q")
        assert (result.status, result.error.status_code, len(script.requests)) == (
            S.FAILED,
            code,
            1,
        )


async def test_stream_timeout_before_the_first_chunk_is_retried(script_factory):
    script = script_factory(stream(5.0), stream(*text_chunks("ok")))
    seen, _, result = await consume(agent_over(script, llm_timeout=0.05))
    assert (result.status, seen, len(script.requests)) == (S.COMPLETED, "ok", 2)


def test_faults_module_is_loud():
    script = LLMScript()
    with pytest.raises(AssertionError, match="no scripted response"):
        asyncio.run(script.client().complete([{"role": "user", "content": "q"}]))


async def test_p2_tool_calls_cut_by_the_output_limit_are_not_executed(script_factory):
    calls = []
    spec = ToolSpec(
        "lookup",
        "Look an order up.",
        {"type": "object", "properties": {"order_id": {"type": "string"}}},
        lambda order_id="A1": calls.append(order_id) or "found",
    )
    cut = tool_call("lookup", {})
    body = cut.json()
    body["choices"][0]["finish_reason"] = "length"
    script = script_factory(httpx.Response(200, json=body))
    result = await agent_over(script, tools=[spec]).run("q")
    assert (result.status, result.reason, calls, len(script.requests)) == (
        S.COMPLETED,
        R.LENGTH,
        [],
        1,
    )
