"""Broken streams over a real socket: a tiny starlette app on 127.0.0.1 that stalls or drops
the connection mid-answer, and the scheduler's own HTTP pool (no injected client)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from scheduler import (
    AgentConfig,
    AgentStatus,
    ContentDelta,
    LightweightAgent,
    LLMStreamInterrupted,
    OpenAIChatClient,
    StreamInterrupted,
)

from .faults import text_chunks

S = AgentStatus


class Broken:
    """Plays one behaviour per request: ``stall`` or ``drop`` after two chunks, or ``ok``."""

    def __init__(self) -> None:
        self.plan: list[str] = []
        self.requests = 0

    async def chat(self, request: Request) -> StreamingResponse:
        await request.body()
        self.requests += 1
        behaviour = self.plan.pop(0) if self.plan else "ok"
        return StreamingResponse(self._body(behaviour), media_type="text/event-stream")

    async def _body(self, behaviour: str) -> AsyncIterator[bytes]:
        if behaviour == "ok":
            for part in text_chunks("All ", "good."):
                yield part
            return
        for part in text_chunks("Your ", "refund ", finish=None, done=False):
            yield part
        if behaviour == "stall":
            await asyncio.sleep(3)
        raise ConnectionResetError("the server dropped the connection")  # uvicorn aborts it


@pytest.fixture(scope="module")
def server():
    broken = Broken()
    app = Starlette(routes=[Route("/v1/chat/completions", broken.chat, methods=["POST"])])
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, log_level="critical", access_log=False, lifespan="off", timeout_graceful_shutdown=1
    )
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not running.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert running.started, "the loopback server did not start"
    yield broken, f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    running.should_exit = True
    thread.join(10)


async def test_a_real_stall_after_delivered_text_is_interrupted_not_retried(server):
    broken, base_url = server
    broken.plan, broken.requests = ["stall", "ok"], 0
    async with LightweightAgent(
        OpenAIChatClient(base_url=base_url, model="m", backoff_base_s=0.01),
        AgentConfig(token_budget=None, llm_timeout=0.2),
    ) as agent:
        events = [e async for e in agent.stream("q")]
    seen = "".join(e.text for e in events if isinstance(e, ContentDelta))
    result = events[-1].result
    assert (result.status, type(result.error), seen, broken.requests) == (
        S.FAILED,
        LLMStreamInterrupted,
        "Your refund ",
        1,
    )
    assert [type(e) for e in events].count(StreamInterrupted) == 1
    assert "no data for 0.2s" in str(result.error)


async def test_a_real_dropped_connection_is_retried_in_run(server):
    broken, base_url = server
    broken.plan, broken.requests = ["drop", "ok"], 0
    async with OpenAIChatClient(base_url=base_url, model="m", backoff_base_s=0.01) as llm:
        agent = LightweightAgent(llm, AgentConfig(token_budget=None, stream=True))
        result = await agent.run("q")
    assert (result.status, result.content, result.usage.retries, broken.requests) == (
        S.COMPLETED,
        "All good.",
        1,
        2,
    )
    retry = [a for s in result.trace.spans("llm") for n, _, a in s.events if n == "retry"]
    assert json.dumps(retry[0]["error"]).startswith('"RemoteProtocolError')
