"""Reading a stream as it passes: the assembled answer and each chunk's arrival."""

from __future__ import annotations

import json

from bench.traffic.stream import StreamReader, timing_from
from scenarios import TurnTiming


def event(delta: dict, finish: str | None = None, **extra: object) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


STREAM = [
    event({"role": "assistant", "content": ""}),
    event({"content": "Checking"}),
    event(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "find", "arguments": ""},
                }
            ]
        }
    ),
    event({"tool_calls": [{"index": 0, "function": {"arguments": '{"q":'}}]}),
    event({"tool_calls": [{"index": 0, "function": {"arguments": ' "x" }'}}]}),
    b": keep-alive\n\n",
    event({}, "tool_calls"),
    b"data: "
    + json.dumps(
        {"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}
    ).encode()
    + b"\n\n",
    b"data: [DONE]\n\n",
]


def test_a_stream_split_anywhere_assembles_to_one_completion_with_its_arrivals() -> None:
    data = b"".join(STREAM)
    reader = StreamReader()
    # three bytes at a time, at t = 0, 1, 2, ... (splitting \r\n and events alike)
    for step, at in enumerate(range(0, len(data), 3)):
        reader.feed(data[at : at + 3], float(step))
    ends = [sum(len(e) for e in STREAM[: i + 1]) for i in range(len(STREAM))]
    payload_events = (1, 2, 3, 4)  # content, and the three tool-call fragments
    assert reader.arrivals == [float((ends[i] - 1) // 3) for i in payload_events]
    assert reader.complete and reader.bad_events == 0
    assert reader.assembler.completion() == {
        "id": "chatcmpl-1",
        "model": "m",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Checking",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "find", "arguments": '{"q": "x" }'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4},
    }


def test_a_cut_stream_is_not_complete_and_a_corrupt_event_is_counted() -> None:
    reader = StreamReader()
    reader.feed(STREAM[0] + STREAM[1] + b"data: {not json\n\n", 1.0)
    assert (reader.complete, reader.bad_events, reader.arrivals) == (False, 1, [1.0])


def test_timings_from_clock_readings() -> None:
    assert timing_from(10.0, 10.25) == TurnTiming(stream=False, total_ms=250.0)
    assert timing_from(10.0, 10.5, [10.1, 10.1004, 10.3]) == TurnTiming(
        stream=True, ttft_ms=100.0, total_ms=500.0, gaps_ms=[0.4, 199.6]
    )
    # a stream that carried no content at all: no first token
    assert timing_from(10.0, 10.2, []) == TurnTiming(stream=True, total_ms=200.0)
