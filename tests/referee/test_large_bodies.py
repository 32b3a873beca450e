"""A large request body is counted off the mock's event loop (attack 11 of issue 26): while
one client's 8 MB body is parsed and counted, a small request from another is answered."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx

from bench.referee import tokens
from bench.referee.core import MockLLM
from bench.referee.server import create_app

LARGE = 256 * 1024  # bytes: well above the size from which the server counts off its loop


def test_a_small_request_is_answered_while_a_large_body_is_handled():
    mock = MockLLM()
    handle = mock.handle
    large_started, small_answered = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def gated(raw: bytes):
        if len(raw) >= LARGE:
            large_started.set()
            # handled on the loop, this would hold the small request: the wait times out
            seen["small answered first"] = small_answered.wait(60)
        return handle(raw)

    mock.handle = gated  # type: ignore[method-assign]
    app = create_app(mock)
    body = {"model": "scenario/single_tool", "messages": [{"role": "user", "content": "hi"}]}
    big = {**body, "messages": [{"role": "user", "content": "x " * LARGE}]}

    async def main() -> tuple[int, int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://mock") as client:
            large = asyncio.create_task(
                client.post("/v1/chat/completions", content=json.dumps(big))
            )
            assert await asyncio.to_thread(large_started.wait, 60)
            small = await client.post("/v1/chat/completions", json=body)
            small_answered.set()
            return small.status_code, (await large).status_code

    assert asyncio.run(main()) == (200, 200)
    assert seen == {"small answered first": True}


def test_a_large_text_is_counted_as_a_small_one_is():
    text = "The order A123 can be returned within 30 days. " * 3000
    assert len(text) >= 64 * 1024  # counted through the numpy path
    encoder = tokens._encoder()
    assert tokens.text_tokens(text) == len(encoder.encode(text, disallowed_special=()))
    assert tokens.text_tokens(text + "<|endoftext|>") == len(
        encoder.encode(text + "<|endoftext|>", disallowed_special=())
    )
