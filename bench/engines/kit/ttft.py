"""Time to first token (TTFT): where the final answer starts, and the mock's own share of it.

TTFT is the time from the start of a run to the first non-empty content token of the
**final answer** reaching the caller through the framework's user-facing stream (tool-call
fragments and the text of earlier LLM calls do not count). For a ReAct agent the answer is
the text after ``Final Answer:`` in its last LLM call.

The **floor** is the part of that time the mock scripts: the full latency of every LLM call
before the final one, the scripted tool latency, the final call's own time to first token
and the pacing of its stream up to the first answer chunk. ``scripted_floor_ms`` computes it
from a latency profile for a client that streams the tool-calling protocol (what the raw
loop does); ``scripted_ttft_ms`` computes the same for the requests one run really sent
(ReAct text, or a non-streamed answer, arrive later). What a framework adds on top is its
interception latency.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

FINAL_ANSWER_MARKER = "Final Answer:"


def react_answer_started(text: str) -> bool:
    """Whether ReAct text already holds a non-blank character after ``Final Answer:``."""
    at = text.find(FINAL_ANSWER_MARKER)
    return at >= 0 and bool(text[at + len(FINAL_ANSWER_MARKER) :].strip())


def _delta_content(chunk: bytes) -> str:
    line = chunk.strip()
    if not line.startswith(b"data:"):
        return ""
    data = line[5:].strip()
    if data == b"[DONE]":
        return ""
    try:
        payload = json.loads(data)
    except ValueError:
        return ""
    choices = payload.get("choices") or ()
    if not choices:
        return ""
    content = (choices[0].get("delta") or {}).get("content")
    return content if isinstance(content, str) else ""


def first_answer_chunk(chunks: Sequence[bytes], protocol: str | None) -> int | None:
    """Index of the first SSE chunk that carries answer text (None: there is none).

    Tool-calling protocols: the first chunk with non-empty ``delta.content``. ReAct: the
    chunk that completes a non-blank character after ``Final Answer:``.
    """
    text = ""
    for index, chunk in enumerate(chunks):
        content = _delta_content(chunk)
        if not content:
            continue
        if protocol != "react":
            return index
        text += content
        if react_answer_started(text):
            return index
    return None


def reply_ttft_s(reply: Any, protocol: str | None) -> float | None:
    """Seconds from sending a request to the first answer text of the mock's reply.

    A streamed reply's chunk *i* leaves at ``delay_s + offset_s(i)`` (the mock paces against
    a schedule); a non-streamed one arrives whole after ``delay_s``.
    """
    if reply.chunks is None:
        return float(reply.delay_s)
    index = first_answer_chunk(reply.chunks, protocol)
    if index is None:
        return None
    return float(reply.delay_s + reply.offset_s(index))


def reply_total_s(reply: Any) -> float:
    """Seconds from sending a request to the last byte of the mock's reply."""
    if reply.chunks:
        return float(reply.delay_s + reply.offset_s(len(reply.chunks) - 1))
    return float(reply.delay_s)


def scripted_times_s(scenario: Any, profile: Any) -> tuple[float | None, float]:
    """(floor, whole run) in seconds: what the mock scripts for a streaming tool-calling client.

    Plays the scenario's script on a private mock with ``profile`` (faults and retry turns
    removed): every turn before the first content-only turn in full, plus the largest
    scripted latency of each turn's tools (called concurrently, as the raw loop does), plus
    the final turn's time to its first content chunk. The floor is None when the script has no content-only
    turn; the whole run counts the final turn in full.
    """
    from bench.referee import MockLLM

    # the path without failures: no LLM fault, and no retry turn (a model repeating calls
    # that failed; a tool that gets through at once skips them)
    script = [turn.model_copy(update={"fault": None}) for turn in scenario.script if not turn.retry]
    final = next((i for i, turn in enumerate(script) if not turn.tool_calls), None)
    mock = MockLLM(
        scenarios={scenario.name: scenario.model_copy(update={"script": script})},
        latency=profile,
        record=False,
    )
    tools = scenario.tool_map
    placeholder_tool = {"type": "function", "function": {"name": "t", "parameters": {}}}
    total = 0.0
    floor = None
    for index in range(len(script) if final is None else final + 1):
        # the turn is read from the body alone: assistant messages after the last user one
        messages = [{"role": "user", "content": "?"}]
        messages += [{"role": "assistant", "content": ""}] * index
        body = {
            "model": f"scenario/{scenario.name}",
            "messages": messages,
            "tools": [placeholder_tool],
            "stream": True,
        }
        reply = mock.handle(json.dumps(body).encode())
        if reply.status != 200:
            break
        if index == final:
            first = reply_ttft_s(reply, "tools")
            floor = None if first is None else total + first
        total += reply_total_s(reply)
        waits = [
            tools[call.name].behavior.latency_ms / 1000
            for call in script[index].tool_calls
            if call.name in tools
        ]
        total += max(waits, default=0.0)
    return floor, total


def scripted_floor_ms(scenario: Any, profile: Any) -> float | None:
    """The mock's scripted time to the first answer token (ms); see ``scripted_times_s``."""
    floor, _ = scripted_times_s(scenario, profile)
    return None if floor is None else floor * 1000


__all__ = [
    "FINAL_ANSWER_MARKER",
    "first_answer_chunk",
    "react_answer_started",
    "reply_total_s",
    "reply_ttft_s",
    "scripted_floor_ms",
    "scripted_times_s",
]
