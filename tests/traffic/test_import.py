"""``scenarios import``: a gateway-style log of the same traffic gives the same scenario.

While the scheduler runs through the recording proxy, a transport on the client side logs
each call the way gateways and observability tools export them (request and response bodies,
start / end / first-token timestamps, the request headers — API key included): JSON
responses as ``chat.completion`` objects with epoch times, streams as lists of chunks with
ISO 8601 times. Imported, that log must give the live recording's scenario; only the timings
differ (another instrument, on the other side of the proxy).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.traffic import Redactor, build_scenarios, read_log
from tests.traffic.conftest import REDACTED_FIELD, SECRETS, recording_proxy, run_scheduler


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat()


class GatewayLog(httpx.AsyncBaseTransport):
    """Sends through a real socket transport and logs every call as a gateway would."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lines: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.time()
        response = await self.inner.handle_async_request(request)
        body = json.loads(request.content)
        line: dict[str, Any] = {
            "headers": dict(request.headers),
            "status_code": response.status_code,
        }
        log = self.lines
        inner_stream = response.stream

        class Logged(httpx.AsyncByteStream):
            """Tees the body; the line is written when the client closes the response (a
            client may stop reading at ``[DONE]``)."""

            data, first = b"", None

            async def __aiter__(self):
                async for piece in inner_stream:
                    if self.first is None and (b'"content":"' in piece or b'"tool_calls"' in piece):
                        self.first = time.time()
                    self.data += piece
                    yield piece

            async def aclose(self) -> None:
                ended = time.time()
                await inner_stream.aclose()
                if body.get("stream"):
                    chunks = [
                        json.loads(event[6:])
                        for event in self.data.decode().split("\n\n")
                        if event.startswith("data: {")
                    ]
                    line.update(
                        input=body,
                        output=chunks,
                        startTime=_iso(started),
                        endTime=_iso(ended),
                        completionStartTime=_iso(self.first or ended),
                    )
                else:
                    line.update(
                        request=body,
                        response=json.loads(self.data),
                        start_time=started,
                        end_time=ended,
                    )
                log.append(line)

        return httpx.Response(
            response.status_code, headers=response.headers, stream=Logged(), request=request
        )


def without_timing(scenario: Any) -> dict[str, Any]:
    data = scenario.model_dump()
    for turn in data["script"]:
        turn.pop("timing")
    return data


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_gateway_log_imports_to_the_live_recording(
    stream: bool, upstream: str, tmp_path: Path
) -> None:
    gateway = GatewayLog()
    with recording_proxy(upstream, tmp_path / "live", "orders") as proxy:
        async with httpx.AsyncClient(transport=gateway, timeout=30) as client:
            await run_scheduler(proxy.url, stream=stream, http_client=client)
    log = tmp_path / "gateway.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in gateway.lines), encoding="utf-8")
    assert any(s.encode() in log.read_bytes() for s in SECRETS)  # the log does hold them

    live = build_scenarios(read_log(tmp_path / "live" / "orders.jsonl"), "orders")
    imported = build_scenarios(read_log(log, Redactor(fields=[REDACTED_FIELD])), "orders")
    assert (imported.notes, imported.errors) == ([], [])
    assert [without_timing(s) for s in imported.scenarios] == [
        without_timing(s) for s in live.scenarios
    ]
    for theirs, ours in zip(imported.scenarios[0].script, live.scenarios[0].script, strict=True):
        assert theirs.timing is not None and ours.timing is not None
        assert theirs.timing.stream is ours.timing.stream is stream
        # the client sees the proxy's hop too: later (by how much depends on how busy the
        # machine is, so no upper bound), never earlier by much; the proxy's end of a stream
        # waits for its own recording, so on a busy machine the client may see the end a few
        # ms before the proxy's clock does (5.0 ms of 132 seen once under load): 10 %
        assert theirs.timing.total_ms - ours.timing.total_ms > -max(5.0, 0.1 * ours.timing.total_ms)
        if stream:
            assert theirs.timing.ttft_ms - ours.timing.ttft_ms > -5
