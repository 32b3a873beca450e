"""OpenAIChatClient against the mock: plain and streamed answers, retries, timeouts, errors."""

from __future__ import annotations

import httpx
import pytest

from bench.referee.transport import BASE_URL
from scheduler import (
    ChatResponse,
    LLMConnectionError,
    LLMResponseError,
    LLMStatusError,
    LLMTimeout,
    OpenAIChatClient,
    TokenUsage,
    ToolCall,
)
from scheduler.llm import _retry_after

from .conftest import scenario

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "d",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]
CALLS = {
    "tool_calls": [
        {"name": "search", "args": {"query": "a"}},
        {"name": "search", "args": {"query": "b c"}},
    ]
}
ANSWER = "The answer is forty-two, as computed."


def messages() -> list[dict]:
    return [{"role": "user", "content": "q"}]


@pytest.fixture
def h(harness_factory):
    return harness_factory(
        scenario("calls", script=[CALLS, {"content": ANSWER}]),
        scenario("answer", script=[{"content": ANSWER}]),
        scenario(
            "limited",
            script=[
                {"content": ANSWER, "fault": {"status": 429, "retry_after_s": 0.05, "times": 2}}
            ],
        ),
        scenario("broken", script=[{"content": ANSWER, "fault": {"status": 500, "times": 2}}]),
        scenario("slow", script=[{"content": ANSWER, "fault": {"delay_s": 5, "times": 5}}]),
    )


async def test_plain_completion_is_typed(h):
    response = await h.client("calls").complete(messages(), tools=TOOLS, params={"temperature": 0})
    assert response == ChatResponse(
        None,
        [
            ToolCall("call_t0_0", "search", '{"query": "a"}'),
            ToolCall("call_t0_1", "search", '{"query": "b c"}'),
        ],
        "tool_calls",
        TokenUsage(h.mock.requests[0].prompt_tokens, h.mock.requests[0].completion_tokens),
        "scenario/calls",
        response.id,
    )
    assert h.bodies()[0] == {
        "model": "scenario/calls",
        "messages": messages(),
        "tools": TOOLS,
        "temperature": 0,
    }


async def test_streamed_completion_accumulates_fragments(h):
    deltas: list[str] = []
    calls = await h.client("calls").complete_streaming(
        messages(), tools=TOOLS, on_delta=deltas.append
    )
    assert (calls.content, calls.tool_calls, calls.finish_reason) == (
        None,
        [
            ToolCall("call_t0_0", "search", '{"query": "a"}'),
            ToolCall("call_t0_1", "search", '{"query": "b c"}'),
        ],
        "tool_calls",
    )
    assert calls.usage == TokenUsage(
        h.mock.requests[0].prompt_tokens, h.mock.requests[0].completion_tokens
    )
    assert deltas == []  # tool-call fragments are not content
    answer = await h.client("answer").complete_streaming(
        messages(), tools=TOOLS, on_delta=deltas.append
    )
    assert (answer.content, answer.finish_reason, "".join(deltas)) == (ANSWER, "stop", ANSWER)
    assert len(deltas) == len(ANSWER.split())  # one chunk per word
    assert answer.ttft_s is not None and answer.ttft_s >= 0
    assert h.bodies()[1]["stream"] is True and h.bodies()[1]["stream_options"] == {
        "include_usage": True
    }


async def test_retry_after_is_honoured_and_retries_are_reported(h):
    retries = []
    client = h.client("limited", sleep=h.recording_sleep(), max_retries=3)
    response = await client.complete(messages(), tools=TOOLS, on_retry=retries.append)
    assert (response.content, response.attempts) == (ANSWER, 3)
    assert h.sleeps == [0.05, 0.05]  # exactly what the server asked for, no jitter
    assert [(r.attempt, r.delay_s, r.status_code, r.retry_after_s) for r in retries] == [
        (1, 0.05, 429, 0.05),
        (2, 0.05, 429, 0.05),
    ]
    assert retries[0].error == "HTTP 429: scripted fault: HTTP 429"
    assert [r.status for r in h.mock.requests] == [429, 429, 200]


async def test_server_errors_back_off_exponentially_with_jitter(h):
    client = h.client(
        "broken", sleep=h.recording_sleep(), backoff_base_s=0.01, jitter=0.5, rng=lambda: 0.5
    )
    response = await client.complete(messages(), tools=TOOLS)
    assert (response.content, response.attempts) == (ANSWER, 3)
    assert h.sleeps == [0.01 * 0.75, 0.02 * 0.75]


async def test_retries_exhausted(h):
    client = h.client("broken", sleep=h.recording_sleep(), backoff_base_s=0.001, max_retries=1)
    with pytest.raises(LLMStatusError) as caught:
        await client.complete(messages(), tools=TOOLS)
    assert (caught.value.status_code, caught.value.attempts) == (500, 2)
    assert str(caught.value) == "HTTP 500: scripted fault: HTTP 500 (after 2 attempts)"


async def test_client_errors_are_not_retried(h):
    client = h.client("no_such_scenario", sleep=h.recording_sleep())
    with pytest.raises(LLMStatusError) as caught:
        await client.complete(messages(), tools=TOOLS)
    assert (caught.value.status_code, caught.value.attempts, h.sleeps) == (404, 1, [])
    assert "is not a scenario" in caught.value.message


async def test_timeout_is_a_deadline_even_in_process(h):
    client = h.client(
        "slow", sleep=h.recording_sleep(), timeout=0.05, max_retries=1, backoff_base_s=0.001
    )
    with pytest.raises(LLMTimeout) as caught:
        await client.complete(messages(), tools=TOOLS)
    assert (caught.value.timeout_s, caught.value.attempts) == (0.05, 2)
    assert str(caught.value) == "LLM call timed out after 0.05s (after 2 attempts)"
    assert len(h.mock.requests) == 2


def _client_over(handler) -> OpenAIChatClient:
    return OpenAIChatClient(
        base_url=BASE_URL,
        model="m",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=1,
        backoff_base_s=0.001,
    )


async def test_transport_failures_and_garbage():
    # what the mock cannot produce: a refused connection, a body that is not a completion
    def refuse(request):
        raise httpx.ConnectError("connection refused")

    with pytest.raises(LLMConnectionError, match="ConnectError: connection refused") as caught:
        await _client_over(refuse).complete(messages(), tools=TOOLS)
    assert caught.value.attempts == 2
    with pytest.raises(LLMResponseError, match="not a chat completion: KeyError"):
        await _client_over(lambda request: httpx.Response(200, json={"nope": 1})).complete(
            messages(), tools=TOOLS
        )


async def test_api_key_header_and_owned_client_lifecycle():
    seen = []

    def record(request):
        seen.append(request.headers.get("authorization"))
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        )

    injected = httpx.AsyncClient(transport=httpx.MockTransport(record))
    client = OpenAIChatClient(
        base_url="http://x/v1", model="m", api_key="sk-1", http_client=injected
    )
    assert (await client.complete(messages(), tools=TOOLS)).content == "hi"
    await client.aclose()
    assert seen == ["Bearer sk-1"] and not injected.is_closed  # never closes what it was given
    await injected.aclose()


def test_retry_after_parsing():
    assert _retry_after(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert _retry_after(httpx.Headers({"retry-after": "2"})) == 2.0
    assert _retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert _retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert _retry_after(httpx.Headers({})) is None
