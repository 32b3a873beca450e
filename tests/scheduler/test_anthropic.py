"""AnthropicChatClient: the translation both ways, against the mock's Messages API (in-process),
its retries and its streaming contract, and the agent running on it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from bench.referee.transport import ANTHROPIC_BASE_URL, mock_async_client
from scheduler import (
    AgentConfig,
    AnthropicChatClient,
    ChatResponse,
    LightweightAgent,
    LLMResponseError,
    LLMStatusError,
    LLMStreamInterrupted,
    TokenUsage,
    ToolCall,
)
from scheduler.anthropic import FINISH_REASONS, parse_message, request_body
from tests.referee.conftest import tools_of
from tests.scheduler.conftest import SEARCH, Harness, builtin, scenario

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the knowledge base.",
            "parameters": SEARCH["parameters"],
        },
    }
]


def call(id_: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_the_agents_conversation_as_a_messages_request() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Find A and B."},
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [call("c1", "search", '{"query": "A"}'), call("c2", "search", "{oops")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"hits": 3}'},
        {"role": "tool", "tool_call_id": "c2", "content": "error: arguments are not JSON"},
        {"role": "user", "content": "And?"},
        {"role": "system", "content": "Summarise now."},
    ]
    params = {"temperature": 0.1, "max_tokens": 99, "tool_choice": "none", "stop": "END"}
    body = request_body("claude-x", 4096, messages, TOOLS, params, stream=True)
    assert body == {
        "model": "claude-x",
        "max_tokens": 99,
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Find A and B."}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": "c1", "name": "search", "input": {"query": "A"}},
                    {"type": "tool_use", "id": "c2", "name": "search", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": '{"hits": 3}'},
                    {
                        "type": "tool_result",
                        "tool_use_id": "c2",
                        "content": "error: arguments are not JSON",
                    },
                    {"type": "text", "text": "And?"},
                    {"type": "text", "text": "Summarise now."},
                ],
            },
        ],
        "tools": [
            {
                "name": "search",
                "input_schema": SEARCH["parameters"],
                "description": "Search the knowledge base.",
            }
        ],
        "stop_sequences": ["END"],
        "tool_choice": {"type": "none"},
        "temperature": 0.1,
        "stream": True,
    }


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ({"type": "function", "function": {"name": "search"}}, {"type": "tool", "name": "search"}),
        ({"type": "any"}, {"type": "any"}),
    ],
)
def test_tool_choice_in_the_messages_shape(choice: Any, expected: dict[str, Any]) -> None:
    body = request_body(
        "m", 10, [{"role": "user", "content": "x"}], None, {"tool_choice": choice}, False
    )
    assert body == {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
        "tool_choice": expected,
    }


def test_a_message_as_a_chat_response() -> None:
    data = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "é"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7},
    }
    assert parse_message(data) == ChatResponse(
        "Let me look.",
        [ToolCall("toolu_1", "search", '{"query": "é"}')],
        "tool_calls",
        TokenUsage(15, 7),
        "claude-x",
        "msg_1",
    )
    assert FINISH_REASONS == {
        "tool_use": "tool_calls",
        "end_turn": "stop",
        "stop_sequence": "stop",
        "pause_turn": "stop",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
    }


def _client(h: Harness, name: str, **kwargs: Any) -> AnthropicChatClient:
    http = mock_async_client(h.mock, "httpx", base_url=ANTHROPIC_BASE_URL)
    return AnthropicChatClient(
        base_url=ANTHROPIC_BASE_URL, model=f"scenario/{name}", http_client=http, **kwargs
    )


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_agent_runs_customer_returns_on_anthropic(streaming: bool) -> None:
    h = Harness(builtin("customer_returns"))
    agent = LightweightAgent(
        _client(h, "customer_returns"),
        AgentConfig(system_prompt="You are a customer-service agent.", temperature=None),
        tools=h.tools("customer_returns"),
    )
    if streaming:
        deltas: list[str] = []
        result = None
        async for event in agent.stream("I want to return order A123."):
            text = getattr(event, "text", None)
            if isinstance(text, str):
                deltas.append(text)
            result = getattr(event, "result", result)
    else:
        result = await agent.run("I want to return order A123.")
    assert result is not None
    assert (result.status.value, result.reason.value) == ("completed", "stop")
    assert "within 30 days" in (result.content or "")
    assert [name for name, _ in h.calls] == ["search_knowledge_base", "query_order"]
    assert [r.api for r in h.mock.requests] == ["anthropic"] * 3
    assert [r.turn for r in h.mock.requests] == [0, 1, 2]
    billed = sum(r.prompt_tokens for r in h.mock.requests)
    assert result.usage.input_tokens == billed  # the server's usage, summed
    chats = result.trace.spans("llm")
    assert {s.attributes["gen_ai.provider.name"] for s in chats} == {"anthropic"}
    if streaming:
        assert "".join(deltas) == result.content


async def test_headers_and_the_request_on_the_wire() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "content": [{"type": "text", "text": "hi"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 1},
            },
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = AnthropicChatClient(model="claude-x", api_key="sk-ant-1", http_client=http)
    response = await client.complete([{"role": "user", "content": "x"}])
    assert (response.content, response.finish_reason) == ("hi", "stop")
    (request,) = seen
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-1"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert json.loads(request.content)["max_tokens"] == 4096
    assert (
        repr(client)
        == "AnthropicChatClient(base_url='https://api.anthropic.com', model='claude-x')"
    )
    await http.aclose()


def _events(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {
    "type": "message_start",
    "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 4}},
}
TEXT_START = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "text", "text": ""},
}
HELLO = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}
LO = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}}
STOP = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn"},
    "usage": {"output_tokens": 2},
}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
END = {"type": "message_stop"}


def _scripted_client(bodies: list[tuple[int, bytes]], **kwargs: Any) -> AnthropicChatClient:
    def answer(request: httpx.Request) -> httpx.Response:
        status, body = bodies.pop(0)
        return httpx.Response(status, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return AnthropicChatClient(model="m", http_client=http, backoff_base_s=0.001, **kwargs)


async def test_a_streamed_answer_with_text_and_a_tool_call() -> None:
    tool = {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "t", "name": "search", "input": {}},
    }
    fragments = [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}}
        for p in ('{"que', 'ry": "A"}')
    ]  # fmt: skip
    tool_stop = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 9},
    }
    body = _events(START, {"type": "ping"}, TEXT_START, HELLO, LO, tool, *fragments, tool_stop, END)
    deltas: list[str] = []
    response = await _scripted_client([(200, body)]).complete_streaming(
        [{"role": "user", "content": "x"}], on_delta=deltas.append
    )
    assert (response.content, response.tool_calls, response.finish_reason) == (
        "Hello",
        [ToolCall("t", "search", '{"query": "A"}')],
        "tool_calls",
    )
    assert (response.usage, response.id, response.model) == (TokenUsage(4, 9), "msg_1", "m")
    assert deltas == ["Hel", "lo"] and response.ttft_s is not None


async def test_529_and_an_error_event_before_any_text_are_retried() -> None:
    ok = _events(START, TEXT_START, HELLO, LO, STOP, END)
    overloaded = json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    )
    bodies = [(529, overloaded.encode()), (200, _events(START, OVERLOADED)), (200, ok)]
    response = await _scripted_client(bodies).complete_streaming([{"role": "user", "content": "x"}])
    assert (response.content, response.attempts) == ("Hello", 3)


async def test_an_error_event_after_delivered_text_interrupts_the_stream() -> None:
    client = _scripted_client([(200, _events(START, TEXT_START, HELLO, OVERLOADED))])
    with pytest.raises(LLMStreamInterrupted) as caught:
        await client.complete_streaming([{"role": "user", "content": "x"}], on_delta=lambda _: None)
    assert caught.value.delivered_chars == 3
    assert "overloaded_error: Overloaded" in str(caught.value)


async def test_a_stream_without_its_stop_reason_is_truncated_and_retried() -> None:
    truncated = _events(START, TEXT_START, HELLO)
    client = _scripted_client([(200, truncated), (200, truncated)], max_retries=1)
    with pytest.raises(LLMResponseError, match="without a finish reason") as caught:
        await client.complete_streaming([{"role": "user", "content": "x"}])
    assert caught.value.attempts == 2


async def test_a_non_transient_error_event_is_not_retried() -> None:
    invalid = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    client = _scripted_client([(200, _events(START, invalid))])
    with pytest.raises(LLMResponseError, match="invalid_request_error: bad") as caught:
        await client.complete_streaming([{"role": "user", "content": "x"}])
    assert caught.value.attempts == 1


async def test_the_mocks_scripted_429_is_retried_after_its_retry_after() -> None:
    h = Harness(builtin("llm_rate_limit"))
    client = _client(h, "llm_rate_limit", sleep=h.recording_sleep(), max_retries=5)
    response = await client.complete(
        [{"role": "user", "content": "x"}], tools=tools_of(builtin("llm_rate_limit"))
    )
    fault = builtin("llm_rate_limit").script[0].fault
    assert [r.status for r in h.mock.requests] == [429] * fault.times + [200]
    assert h.sleeps == [fault.retry_after_s] * fault.times
    assert response.attempts == fault.times + 1


async def test_a_refused_request_is_an_llm_status_error_with_anthropics_message() -> None:
    h = Harness(scenario("one", script=[{"content": "hi"}]))
    client = _client(h, "nope", max_retries=0)
    with pytest.raises(LLMStatusError) as caught:
        await client.complete([{"role": "user", "content": "x"}])
    assert caught.value.status_code == 404
    assert caught.value.message.startswith("model: 'scenario/nope' is not a scenario")


async def test_a_body_that_is_no_message_is_a_response_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"type": "completion", "completion": "hi"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = AnthropicChatClient(model="m", http_client=http, max_retries=0)
    with pytest.raises(LLMResponseError, match="not a message object"):
        await client.complete([{"role": "user", "content": "x"}])
