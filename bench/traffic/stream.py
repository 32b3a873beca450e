"""Reading a chat-completion stream as it passes: when each chunk came, and what it said.

``StreamReader`` is fed the bytes of a Server-Sent Events response as they arrive (the proxy
forwards each piece at once and only looks over its shoulder). It notes the arrival time of
every event that carries content or a tool-call fragment, and assembles the chunks into the
``chat.completion`` object a non-streamed call would have returned: content joined, tool
calls merged by index with their argument fragments concatenated exactly as the model wrote
them.

What it keeps is bounded whatever the stream (an endless one included): the answer up to
``MAX_ANSWER_CHARS`` (past it the answer is marked ``overflow`` and no longer assembled), one
event up to ``MAX_EVENT_BYTES``, and arrival times thinned to every 2nd, 4th, ... chunk
once there are more than ``2 * MAX_GAPS`` of them.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from scenarios.loader import MAX_FILE_BYTES
from scenarios.schema import MAX_RECORDED_MS, TurnTiming

_DONE = "[DONE]"
MAX_GAPS = 100_000  # the bound of TurnTiming.gaps_ms
MAX_ANSWER_CHARS = MAX_FILE_BYTES  # a longer answer cannot be part of a scenario file
MAX_EVENT_BYTES = 4 * MAX_FILE_BYTES


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _thinned(arrivals: list[float], keep: int) -> list[float]:
    """At most ``keep`` arrivals, evenly spread, the first and the last kept."""
    if len(arrivals) <= keep:
        return arrivals
    step = (len(arrivals) - 1) / (keep - 1)
    return [arrivals[round(i * step)] for i in range(keep)]


def timing_from(
    started: float, ended: float, arrivals: list[float] | None = None
) -> TurnTiming | None:
    """A ``TurnTiming`` from ``perf_counter`` readings: the send, the last byte and, for a
    stream, each content / tool-call chunk's arrival (None: not streamed). More arrivals than
    a timing holds are thinned evenly; None when the call took longer than a recorded
    duration may be (an hour)."""
    if _ms(ended - started) > MAX_RECORDED_MS:
        return None
    if arrivals is None:
        return TurnTiming(stream=False, total_ms=_ms(ended - started))
    offsets = [_ms(at - started) for at in _thinned(arrivals, MAX_GAPS + 1)]
    return TurnTiming(
        stream=True,
        ttft_ms=offsets[0] if offsets else None,
        total_ms=max(_ms(ended - started), offsets[-1] if offsets else 0.0),
        gaps_ms=[round(b - a, 3) for a, b in pairwise(offsets)],
    )


class StreamAssembler:
    """Merges ``chat.completion.chunk`` objects into one ``chat.completion``."""

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.overflow = False  # the answer grew past MAX_ANSWER_CHARS: no longer assembled
        self._chars = 0

    def add(self, chunk: dict[str, Any]) -> bool:
        """Merge one chunk; True when it carried content or a tool-call fragment."""
        for key in ("id", "model", "created", "system_fingerprint"):
            if key in chunk and key not in self.head:
                self.head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        payload = False
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # n > 1: only the first choice is an agent's answer
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                continue
            text = delta.get("content")
            if isinstance(text, str) and text:
                payload = True
                if self._fits(len(text)):
                    self.content.append(text)
            fragments = delta.get("tool_calls")
            for fragment in fragments if isinstance(fragments, list) else ():
                if isinstance(fragment, dict):
                    payload = True
                    self._merge_call(fragment)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return payload

    def _fits(self, chars: int) -> bool:
        self._chars += chars
        self.overflow = self.overflow or self._chars > MAX_ANSWER_CHARS
        return not self.overflow

    def _merge_call(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index", 0)
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        name, arguments = function.get("name"), function.get("arguments")
        name = name if isinstance(name, str) else ""
        arguments = arguments if isinstance(arguments, str) else ""
        if not isinstance(index, int) or not self._fits(len(name) + len(arguments) + 1):
            return
        call = self.calls.setdefault(
            index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if isinstance(fragment.get("id"), str) and fragment["id"]:
            call["id"] = fragment["id"]
        call["function"]["name"] += name
        call["function"]["arguments"] += arguments

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return {
            **self.head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        }


class StreamReader:
    """Parses SSE bytes as they arrive and times the chunks that carry the answer."""

    def __init__(self) -> None:
        self.assembler = StreamAssembler()
        self.arrivals: list[float] = []  # perf_counter of content / tool-call chunks (thinned)
        self.done = False
        self.bad_events = 0
        self.oversized_events = 0
        self._buffer = b""
        self._skipping = False  # inside an event larger than MAX_EVENT_BYTES
        self._stride = 1  # keep every n-th arrival
        self._chunks = 0

    def feed(self, data: bytes, now: float) -> None:
        data = self._buffer + data
        if self._skipping:
            end = data.replace(b"\r\n", b"\n").find(b"\n\n")
            if end < 0:
                self._buffer = data[-3:]  # a separator may straddle two pieces
                return
            self._skipping = False
            data = data.replace(b"\r\n", b"\n")[end + 2 :]
        *events, rest = data.replace(b"\r\n", b"\n").split(b"\n\n")
        for event in events:
            self._event(event, now)
        if len(rest) > MAX_EVENT_BYTES:
            self.oversized_events += 1
            self.bad_events += 1
            self._skipping = True
            rest = rest[-3:]
        self._buffer = rest

    def _event(self, event: bytes, now: float) -> None:
        lines = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            return  # a comment or a keep-alive
        data = b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines)
        if data.strip() == _DONE.encode():
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            self.bad_events += 1
            return
        if isinstance(chunk, dict) and self.assembler.add(chunk):
            self._arrived(now)

    def _arrived(self, now: float) -> None:
        self._chunks += 1
        if (self._chunks - 1) % self._stride:
            return
        self.arrivals.append(now)
        if len(self.arrivals) > 2 * MAX_GAPS:
            self.arrivals = self.arrivals[::2]
            self._stride *= 2

    @property
    def complete(self) -> bool:
        """Whether the answer ended as a stream should (a finish reason, or ``[DONE]``)."""
        return self.assembler.finished or self.done
