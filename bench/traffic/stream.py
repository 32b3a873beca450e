"""Reading a chat-completion stream as it passes: when each chunk came, and what it said.

``StreamReader`` is fed the bytes of a Server-Sent Events response as they arrive (the proxy
forwards each piece at once and only looks over its shoulder). It notes the arrival time of
every event that carries content or a tool-call fragment, and assembles the chunks into the
``chat.completion`` object a non-streamed call would have returned: content joined, tool
calls merged by index with their argument fragments concatenated exactly as the model wrote
them.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from scenarios.schema import TurnTiming

_DONE = "[DONE]"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def timing_from(started: float, ended: float, arrivals: list[float] | None = None) -> TurnTiming:
    """A ``TurnTiming`` from ``perf_counter`` readings: the send, the last byte and, for a
    stream, each content / tool-call chunk's arrival (None: not streamed)."""
    if arrivals is None:
        return TurnTiming(stream=False, total_ms=_ms(ended - started))
    offsets = [_ms(at - started) for at in arrivals]
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
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                payload = True
            for fragment in delta.get("tool_calls") or ():
                payload = True
                self._merge_call(fragment)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return payload

    def _merge_call(self, fragment: dict[str, Any]) -> None:
        call = self.calls.setdefault(
            fragment.get("index", 0),
            {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        call["function"]["name"] += function.get("name") or ""
        call["function"]["arguments"] += function.get("arguments") or ""

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
        self.arrivals: list[float] = []  # perf_counter of each content / tool-call chunk
        self.done = False
        self.bad_events = 0
        self._buffer = b""

    def feed(self, data: bytes, now: float) -> None:
        self._buffer = (self._buffer + data).replace(b"\r\n", b"\n")
        *events, self._buffer = self._buffer.split(b"\n\n")
        for event in events:
            self._event(event, now)

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
        except ValueError:
            self.bad_events += 1
            return
        if isinstance(chunk, dict) and self.assembler.add(chunk):
            self.arrivals.append(now)

    @property
    def complete(self) -> bool:
        """Whether the answer ended as a stream should (a finish reason, or ``[DONE]``)."""
        return self.assembler.finished or self.done
