"""The in-process transports honour the client's read timeout, as a socket would.

Without this, a scripted ``fault: {delay_s: ...}`` past an engine's LLM timeout would simply
be waited out in-process (httpx leaves timeouts to the transport), and the llm_timeout
scenario would measure nothing.
"""

from __future__ import annotations

import time

import httpx
import httpx2
import pytest

from bench.referee import MockLLM
from bench.referee.transport import mock_async_client, mock_client
from scenarios import Scenario

SLOW = Scenario.model_validate(
    {
        "name": "slow",
        "description": "answers after 0.5 s the first time",
        "user": "hi",
        "script": [{"content": "late answer", "fault": {"delay_s": 0.5, "times": 1}}],
    }
)
BODY = {"model": "scenario/slow", "messages": [{"role": "user", "content": "hi"}]}
LIBS = {"httpx": httpx, "httpx2": httpx2}


@pytest.mark.parametrize("lib", sorted(LIBS))
async def test_async_read_timeout_then_the_retry_is_answered(lib):
    mock = MockLLM(scenarios={"slow": SLOW})
    async with mock_async_client(mock, lib, timeout=0.1) as client:
        started = time.perf_counter()
        with pytest.raises(LIBS[lib].ReadTimeout, match=r"^no response within 0.1s$"):
            await client.post("/chat/completions", json=BODY)
        assert 0.09 <= time.perf_counter() - started < 0.4
        response = await client.post("/chat/completions", json=BODY)  # same body: fault spent
    answer = response.json()["choices"][0]["message"]["content"]  # no tools: a plain answer
    assert answer == "late answer"
    assert [r.status for r in mock.requests] == [200, 200]  # the mock answered; the client gave up


@pytest.mark.parametrize("lib", sorted(LIBS))
def test_sync_read_timeout(lib):
    mock = MockLLM(scenarios={"slow": SLOW})
    with mock_client(mock, lib, timeout=0.1) as client:
        with pytest.raises(LIBS[lib].ReadTimeout, match=r"^no response within 0.1s$"):
            client.post("/chat/completions", json=BODY)
        assert client.post("/chat/completions", json=BODY).status_code == 200


@pytest.mark.parametrize("lib", sorted(LIBS))
async def test_a_delay_within_the_timeout_is_waited_out(lib):
    mock = MockLLM(scenarios={"slow": SLOW})
    async with mock_async_client(mock, lib, timeout=2.0) as client:
        started = time.perf_counter()
        response = await client.post("/chat/completions", json=BODY)
    assert response.status_code == 200
    assert time.perf_counter() - started >= 0.5


STREAMED = {**BODY, "stream": True}


@pytest.mark.parametrize("lib", sorted(LIBS))
async def test_a_streamed_body_can_be_read_once_like_a_socket(lib):
    # the openai SDK drains response.stream after [DONE]: on a socket that is EOF; a
    # re-iterable body would be played again (paced) and charged to the engine
    mock = MockLLM(scenarios={"slow": SLOW})
    async with mock_async_client(mock, lib) as client:
        await client.post("/chat/completions", json=BODY)  # spend the fault
        async with client.stream("POST", "/chat/completions", json=STREAMED) as response:
            chunks = [chunk async for chunk in response.stream]
            again = [chunk async for chunk in response.stream]
    assert chunks[-1] == b"data: [DONE]\n\n" and again == []


@pytest.mark.parametrize("lib", sorted(LIBS))
def test_a_streamed_body_can_be_read_once_sync(lib):
    mock = MockLLM(scenarios={"slow": SLOW})
    with mock_client(mock, lib) as client:
        client.post("/chat/completions", json=BODY)
        with client.stream("POST", "/chat/completions", json=STREAMED) as response:
            chunks = list(response.stream)
            again = list(response.stream)
    assert chunks[-1] == b"data: [DONE]\n\n" and again == []
