"""Reading logs: the accepted shapes, and one clear line per bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.traffic import MASK, Exchange, LogError, Redactor, read_log
from scenarios import TurnTiming

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": []}
COMPLETION = {
    "object": "chat.completion",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def test_each_accepted_shape_reads_as_the_same_exchange(tmp_path: Path) -> None:
    chunks = [
        {"id": "x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hel"}}]},
        {"id": "x", "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
        {"id": "x", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
    ]
    path = write(
        tmp_path,
        {
            "started_at": 5.0,
            "status": 200,
            "request": REQUEST,
            "response": COMPLETION,
            "timing": {"stream": False, "total_ms": 12.5},
        },
        {
            "custom_id": "r1",
            "request": {"method": "POST", "body": REQUEST},
            "response": {"status_code": 200, "body": COMPLETION},
            "latency_ms": 30,
        },
        "",  # blank lines are skipped
        {
            "input": {**REQUEST, "stream": True},
            "output": chunks,
            "startTime": "2026-01-01T00:00:00Z",
            "endTime": "2026-01-01T00:00:00.250Z",
            "completionStartTime": "2026-01-01T00:00:00.100+00:00",
        },
        {"request": REQUEST, "response": {"error": {"message": "busy"}}, "status_code": 503},
    )
    exchanges = read_log(path)
    streamed = exchanges[2]
    assert [(e.status, e.timing, e.started_at) for e in exchanges] == [
        (200, TurnTiming(stream=False, total_ms=12.5), 5.0),
        (200, TurnTiming(stream=False, total_ms=30.0), None),
        (200, TurnTiming(stream=True, ttft_ms=100.0, total_ms=250.0), 1767225600.0),
        (503, None, None),
    ]
    assert [e.message for e in exchanges] == [COMPLETION["choices"][0]["message"]] * 2 + [
        {"role": "assistant", "content": "hello"},
        None,
    ]
    assert streamed.usage == {"prompt_tokens": 3, "completion_tokens": 1}


def test_credentials_in_logged_headers_are_masked_in_every_line(tmp_path: Path) -> None:
    leaked = {**REQUEST, "messages": [{"role": "user", "content": "key sk-live-ABCDEF"}]}
    path = write(
        tmp_path,
        {"request": leaked, "response": COMPLETION},  # seen before the header that names it
        {
            "request": REQUEST,
            "response": COMPLETION,
            "headers": {"Authorization": "Bearer sk-live-ABCDEF"},
        },
    )
    [first, _] = read_log(path, Redactor())
    assert first.request["messages"] == [{"role": "user", "content": f"key {MASK}"}]
    assert not hasattr(Exchange, "headers")


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ((), "no exchanges (an empty log)"),
        (("{not json",), "1: not JSON (Expecting property name enclosed in double quotes)"),
        (([1, 2],), "1: expected one JSON object per line"),
        (({"response": COMPLETION},), "1: no request: expected a 'request' (or 'input') object"),
        (
            ({"request": REQUEST, "response": "hello"},),
            "1: response: expected a chat.completion object or a list of chunks, not a string",
        ),
        (
            ({"request": REQUEST, "start_time": "yesterday", "end_time": 3},),
            "1: start_time: not an ISO 8601 time or epoch seconds: 'yesterday'",
        ),
        (
            ({"request": REQUEST, "timing": {"stream": True, "ttft_ms": 90, "total_ms": 50}},),
            "1: timing: ttft_ms plus gaps_ms exceeds total_ms",
        ),
        (
            ({"request": REQUEST, "timing": {"stream": False, "total_ms": -1}},),
            "1: timing.total_ms: Input should be greater than or equal to 0",
        ),
        (
            ({"request": REQUEST}, {"request": REQUEST, "status": "ok"}),
            "2: status: expected an HTTP status code, not 'ok'",
        ),
    ],
)
def test_a_bad_log_is_one_line_naming_file_line_and_reason(
    tmp_path: Path, lines: tuple, reason: str
) -> None:
    path = write(tmp_path, *lines)
    with pytest.raises(LogError) as caught:
        read_log(path)
    assert str(caught.value) == (f"{path}:{reason}" if lines else f"{path}: {reason}")
