"""The proxy against a tiny fake upstream: what it forwards, relays and records."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from bench.traffic.proxy import create_app, upstream_url
from bench.traffic.session import RecordingSession
from tests.traffic.conftest import serve_in_thread

SEEN: list[dict] = []


async def chat(request: Request):
    body = json.loads(await request.body())
    SEEN.append(
        {"path": request.url.path, "query": request.url.query, "headers": dict(request.headers)}
    )
    if body.get("model") == "busy":
        return JSONResponse({"error": {"message": "slow down"}}, status_code=429)

    async def cut():  # two chunks, then the connection ends: no finish_reason, no [DONE]
        yield b'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'
        await asyncio.sleep(0.02)
        yield b'data: {"choices":[{"index":0,"delta":{"content":"tial"}}]}\n\n'

    return StreamingResponse(cut(), media_type="text/event-stream")


async def models(_: Request):
    return JSONResponse({"data": [{"id": "m"}]}, headers={"x-upstream": "yes"})


FAKE = Starlette(
    routes=[
        Route("/api/v1/chat/completions", chat, methods=["POST"]),
        Route("/api/v1/models", models),
    ]
)


def test_urls_map_under_the_upstream_base() -> None:
    assert (
        upstream_url("http://h:1/api/v1/", "/v1/chat/completions", "")
        == "http://h:1/api/v1/chat/completions"
    )
    assert upstream_url("http://h:1/v1", "/v1", "a=1") == "http://h:1/v1?a=1"
    assert upstream_url(
        "http://h:1", "/openai/deployments/x/chat/completions", "api-version=2"
    ) == ("http://h:1/openai/deployments/x/chat/completions?api-version=2")


def test_the_proxy_forwards_relays_and_records_what_it_can(tmp_path: Path) -> None:
    fake, fake_thread, fake_url = serve_in_thread(FAKE)
    session = RecordingSession(tmp_path, "rec")
    proxy, proxy_thread, proxy_url = serve_in_thread(
        create_app(fake_url.removesuffix("/v1") + "/api/v1", session)
    )
    try:
        headers = {"Authorization": "Bearer sk-test-SECRET123", "Accept-Encoding": "gzip"}
        with httpx.Client(base_url=proxy_url, headers=headers, timeout=10) as client:
            listed = client.get("/models?page=2")
            busy = client.post("/chat/completions", json={"model": "busy", "messages": []})
            with client.stream(
                "POST",
                "/chat/completions",
                json={
                    "model": "m",
                    "stream": True,
                    "messages": [{"role": "user", "content": "hi"}],
                },
            ) as cut:
                relayed = b"".join(cut.iter_bytes())
    finally:
        for server, thread in ((proxy, proxy_thread), (fake, fake_thread)):
            server.should_exit = True
            thread.join(timeout=10)
    assert (listed.status_code, listed.json(), listed.headers["x-upstream"]) == (
        200,
        {"data": [{"id": "m"}]},
        "yes",
    )
    assert (busy.status_code, busy.json()) == (429, {"error": {"message": "slow down"}})
    assert relayed.count(b"data: ") == 2
    # the client's own headers went on (its key included), the upstream's host and encoding
    assert [s["headers"]["authorization"] for s in SEEN] == ["Bearer sk-test-SECRET123"] * 2
    assert [(s["headers"]["host"], s["headers"]["accept-encoding"]) for s in SEEN] == [
        (fake_url.split("/")[2], "identity")
    ] * 2
    # recorded: the two chat calls (not /models), the cut stream as no usable answer
    assert [(e.status, e.error, e.response is None) for e in session.exchanges] == [
        (429, None, False),
        (200, "the stream ended before its finish_reason", True),
    ]
    cut_timing = session.exchanges[1].timing
    # the second chunk left the upstream 20 ms after the first: it arrived no sooner (the
    # gap itself may be shorter on a busy machine, when the first chunk is read late)
    assert cut_timing.stream and len(cut_timing.gaps_ms) == 1
    assert cut_timing.ttft_ms + cut_timing.gaps_ms[0] >= 20
    assert session.built.notes == [
        "exchange 1: left out: HTTP 429",
        "exchange 2: left out: the stream ended before its finish_reason",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["rec.jsonl"]  # nothing to build a scenario of
    assert b"SECRET" not in (tmp_path / "rec.jsonl").read_bytes()


def test_an_unreachable_upstream_is_a_502_naming_it(tmp_path: Path) -> None:
    session = RecordingSession(tmp_path, "rec")
    proxy, thread, url = serve_in_thread(create_app("http://127.0.0.1:9/v1", session))
    try:
        response = httpx.post(f"{url}/chat/completions", json={"model": "m"}, timeout=10)
    finally:
        proxy.should_exit = True
        thread.join(timeout=10)
    assert response.status_code == 502
    assert response.json()["error"]["message"].startswith(
        "schedbench record: upstream unreachable: ConnectError"
    )
    assert session.exchanges == []
