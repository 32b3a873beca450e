"""The official openai SDK, pointed at the mock (loopback and in-process), gets the script."""

from __future__ import annotations

import json

import openai
import pytest

from bench.referee import MockLLM
from bench.referee.transport import BASE_URL, mock_async_client, mock_client
from tests.referee.conftest import tools_of

EXPECTED_CALLS = [
    ("search_knowledge_base", {"query": "return policy"}),
    ("query_order", {"order_id": "A123"}),
]


def _start_messages(scenario):
    return [
        {"role": "system", "content": scenario.system_prompt},
        {"role": "user", "content": scenario.user},
    ]


def _drive_tool_calls(create, scenario):
    """Play customer_returns turn by turn; return (calls per turn, final content)."""
    messages = _start_messages(scenario)
    seen = []
    while True:
        message, finish = create(messages)
        if finish == "stop":
            return seen, message.content
        assert finish == "tool_calls"
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
        seen.append(calls)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "{}"})


@pytest.fixture(params=["loopback", "inprocess"])
def sync_client(request, mock_server):
    if request.param == "loopback":
        return openai.OpenAI(base_url=mock_server.base_url, api_key="x", max_retries=0)
    return openai.OpenAI(
        base_url=BASE_URL, api_key="x", max_retries=0, http_client=mock_client(MockLLM(), "httpx2")
    )


def test_tool_calls_turn_by_turn(sync_client, builtin_scenarios):
    scenario = builtin_scenarios["customer_returns"]

    def create(messages):
        response = sync_client.chat.completions.create(
            model="scenario/customer_returns", messages=messages, tools=tools_of(scenario)
        )
        assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
        return response.choices[0].message, response.choices[0].finish_reason

    calls, final = _drive_tool_calls(create, scenario)
    assert calls == [[EXPECTED_CALLS[0]], [EXPECTED_CALLS[1]]]
    assert final == scenario.script[-1].content


def test_streaming_accumulates_to_the_same_calls(sync_client, builtin_scenarios):
    scenario = builtin_scenarios["customer_returns"]

    def create(messages):
        with sync_client.chat.completions.stream(
            model="scenario/customer_returns",
            messages=messages,
            tools=tools_of(scenario),
            stream_options={"include_usage": True},
        ) as stream:
            for _ in stream:
                pass
            completion = stream.get_final_completion()
        assert completion.usage.completion_tokens > 0
        return completion.choices[0].message, completion.choices[0].finish_reason

    calls, final = _drive_tool_calls(create, scenario)
    assert calls == [[EXPECTED_CALLS[0]], [EXPECTED_CALLS[1]]]
    assert final == scenario.script[-1].content


def test_streamed_chunks_fragment_the_arguments(sync_client, builtin_scenarios):
    scenario = builtin_scenarios["customer_returns"]
    chunks = list(
        sync_client.chat.completions.create(
            model="scenario/customer_returns",
            messages=_start_messages(scenario),
            tools=tools_of(scenario),
            stream=True,
        )
    )
    fragments = [
        c.choices[0].delta.tool_calls[0].function.arguments
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    ]
    assert len(fragments) > 2
    assert "".join(fragments) == '{"query": "return policy"}'
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_legacy_functions_protocol(sync_client, builtin_scenarios):
    scenario = builtin_scenarios["parallel_tool_calls"]
    functions = [t["function"] for t in tools_of(scenario)]
    messages = _start_messages(scenario)
    names = []
    for _ in range(3):  # the three-call turn is played one call per turn
        response = sync_client.chat.completions.create(
            model="scenario/parallel_tool_calls", messages=messages, functions=functions
        )
        choice = response.choices[0]
        assert choice.finish_reason == "function_call"
        names.append(choice.message.function_call.name)
        messages.append(choice.message.model_dump(exclude_none=True))
        messages.append({"role": "function", "name": names[-1], "content": "{}"})
    assert names == ["get_weather", "find_museum", "find_restaurant"]
    final = sync_client.chat.completions.create(
        model="scenario/parallel_tool_calls", messages=messages, functions=functions
    )
    assert final.choices[0].finish_reason == "stop"
    assert "Gulbenkian" in final.choices[0].message.content


def test_react_request_gets_react_text(sync_client):
    prompt = (
        "Answer using tools, in lines 'Action: <tool>' and 'Action Input: <JSON>'.\n"
        "Question: I want to return order A123.\nThought:"
    )
    first = sync_client.chat.completions.create(
        model="scenario/customer_returns", messages=[{"role": "user", "content": prompt}]
    )
    assert first.choices[0].message.content == (
        "Thought: I should use the search_knowledge_base tool.\n"
        "Action: search_knowledge_base\n"
        'Action Input: {"query": "return policy"}'
    )
    scratchpad = prompt + " ...\nAction: search_knowledge_base\nObservation: found\nThought: ..."
    scratchpad += "\nAction: query_order\nObservation: delivered\nThought:"
    last = sync_client.chat.completions.create(
        model="scenario/customer_returns", messages=[{"role": "user", "content": scratchpad}]
    )
    assert last.choices[0].message.content.startswith(
        "Thought: I now know the final answer.\nFinal Answer: Order A123"
    )


async def test_async_sdk_in_process(builtin_scenarios):
    mock = MockLLM()
    client = openai.AsyncOpenAI(
        base_url=BASE_URL, api_key="x", http_client=mock_async_client(mock, "httpx2")
    )
    scenario = builtin_scenarios["single_tool"]
    response = await client.chat.completions.create(
        model="scenario/single_tool", messages=_start_messages(scenario), tools=tools_of(scenario)
    )
    call = response.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "get_weather",
        {"city": "Paris", "unit": "celsius"},
    )
    [recorded] = mock.requests
    assert (recorded.scenario, recorded.turn, recorded.protocol, recorded.status) == (
        "single_tool",
        0,
        "tools",
        200,
    )
    assert recorded.body["messages"] == _start_messages(scenario)
    assert recorded.prompt_tokens == response.usage.prompt_tokens


async def test_in_process_requests_suspend_like_socket_requests(builtin_scenarios):
    """Two concurrent requests interleave even at zero latency (one await point each)."""
    import asyncio

    mock = MockLLM()
    client = mock_async_client(mock)
    scenario = builtin_scenarios["single_tool"]
    body = {"model": "scenario/single_tool", "messages": _start_messages(scenario)}
    events = []

    async def request(name):
        events.append(f"{name} sent")
        response = await client.post("/chat/completions", json=body)
        events.append(f"{name} answered {response.status_code}")

    await asyncio.gather(request("a"), request("b"))
    assert events == ["a sent", "b sent", "a answered 200", "b answered 200"]
