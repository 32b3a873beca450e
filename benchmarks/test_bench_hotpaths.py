"""The mock LLM's cost per request, in-process: what the harness adds to every LLM step.

A 3-message chat request (system, user, the assistant's tool call) for ``customer_returns``
with its two tool schemas, answered non-streaming (JSON) and streaming (SSE chunks):

- ``handle``: ``MockLLM.handle`` alone — parse, pick the turn, count prompt tokens, render;
- ``client``: through ``mock_async_client`` (httpx, no sockets), 100 requests awaited back to
  back in one coroutine per benchmark round (one ``run_until_complete`` per 100 requests, so
  the loop's own cost stays out); divide the figure by 100 for the per-request cost.

    .venv/bin/pytest benchmarks/test_bench_hotpaths.py --benchmark-enable --benchmark-only

Every engine pays this cost on every LLM call, so it is the floor of the ``raw`` engine's
per-step overhead and it must stay well below the smallest engine difference we report.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.engines.kit.tools import build_tools
from bench.referee import MockLLM
from bench.referee.transport import mock_async_client
from scenarios import load_scenario

ROOT = Path(__file__).resolve().parents[1]
REQUESTS_PER_ROUND = 100


def _body(stream: bool) -> dict[str, Any]:
    scenario = load_scenario(ROOT / "scenarios" / "customer_returns.yaml")
    body: dict[str, Any] = {
        "model": "scenario/customer_returns",
        "messages": [
            {"role": "system", "content": scenario.system_prompt},
            {"role": "user", "content": scenario.user},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_t0_0",
                        "type": "function",
                        "function": {
                            "name": "search_knowledge_base",
                            "arguments": '{"query": "return policy"}',
                        },
                    }
                ],
            },
        ],
        "tools": [tool.openai_schema() for tool in build_tools(scenario)],
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


@pytest.fixture(scope="module")
def mock() -> MockLLM:
    scenario = load_scenario(ROOT / "scenarios" / "customer_returns.yaml")
    return MockLLM(scenarios={scenario.name: scenario}, record=False)


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.mark.benchmark(group="mock-handle")
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_mock_handle(benchmark, mock, stream):
    raw = json.dumps(_body(stream)).encode()
    mock.handle(raw)  # warm: tokenizer, cached tool tokens and completion
    reply = benchmark(mock.handle, raw)
    assert reply.status == 200
    if stream:
        assert reply.chunks[-1] == b"data: [DONE]\n\n"
    else:
        message = json.loads(reply.body)["choices"][0]["message"]
        assert message["tool_calls"][0]["function"]["name"] == "query_order"


@pytest.mark.benchmark(group="mock-client-x100")
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_mock_through_inprocess_client(benchmark, mock, loop, stream):
    body = _body(stream)
    client = mock_async_client(mock)

    async def one() -> str:
        if not stream:
            response = await client.post("/chat/completions", json=body)
            return response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
        names = []
        async with client.stream("POST", "/chat/completions", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: {"):
                    for choice in json.loads(line[6:]).get("choices") or ():
                        for call in (choice.get("delta") or {}).get("tool_calls") or ():
                            name = (call.get("function") or {}).get("name")
                            if name:
                                names.append(name)
        return "".join(names)

    async def many() -> set[str]:
        return {await one() for _ in range(REQUESTS_PER_ROUND)}

    loop.run_until_complete(one())  # warm
    assert benchmark(lambda: loop.run_until_complete(many())) == {"query_order"}
    loop.run_until_complete(client.aclose())
