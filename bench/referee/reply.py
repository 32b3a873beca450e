"""What the mock sends back, and what it records: the data types every part of the mock shares.

A leaf module (nothing of the mock imported): the OpenAI handler (``core``), the Anthropic one
(``anthropic``), the stream faults (``faults``) and both transports build or deliver these.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MODEL_PREFIX = "scenario/"
FORCED_TEXT = "I could not finish with the tools available; here is what I found so far."


@dataclass(frozen=True)
class RecordedRequest:
    """One request the mock received, as the client sent it."""

    scenario: str | None
    turn: int | None
    protocol: str | None
    stream: bool
    status: int
    body: Any
    prompt_tokens: int
    completion_tokens: int
    received_at: float
    api: str = "openai"  # the API the request spoke: openai (chat completions) or anthropic


@dataclass
class MockReply:
    """What to send back: a JSON body, or SSE chunks paced by the latency model.

    A scripted stream fault (``bench.referee.faults``) may hold the body back after headers
    (``lead_s``), pause it (``stall_s``) or close the connection (``drops``) at ``break_at``
    (a chunk index; a plain body: a byte offset). The transports deliver ``deliveries()``.
    """

    status: int
    headers: dict[str, str]
    body: bytes = b""
    chunks: list[bytes] | None = None
    delay_s: float = 0.0  # before the first byte (TTFT, or the whole non-streamed answer)
    chunk_delay_s: float = 0.0  # between streamed chunks
    # a recorded turn's own schedule: each chunk's offset from the first byte (seconds)
    chunk_offsets_s: tuple[float, ...] | None = None
    lead_s: float = 0.0  # streamed: headers at once, the first chunk this much later
    break_at: int | None = None  # where a stall or a drop strikes
    stall_s: float = 0.0  # silence before the piece at break_at
    drops: bool = False  # the connection closes at break_at instead

    @property
    def paced(self) -> bool:
        """Whether the body's pieces wait between each other (else they leave back to back)."""
        return (
            bool(self.chunk_delay_s or self.lead_s or self.stall_s)
            or self.chunk_offsets_s is not None
        )

    @property
    def broken(self) -> bool:
        """Whether a plain body must be delivered in pieces (a stall or a drop in it)."""
        return self.break_at is not None

    def offset_s(self, index: int) -> float:
        """When streamed chunk ``index`` leaves, in seconds after the first byte."""
        if self.chunk_offsets_s is not None:
            offset = self.chunk_offsets_s[index]
        else:
            offset = index * self.chunk_delay_s
        if self.break_at is not None and index >= self.break_at:
            offset += self.stall_s
        return offset + self.lead_s

    def deliveries(self) -> Iterator[tuple[float, bytes | None]]:
        """The body as the transport sends it: (seconds after the headers, bytes), where
        None means the connection closes there."""
        if self.chunks is None:
            if self.break_at is None:
                yield 0.0, self.body
                return
            yield 0.0, self.body[: self.break_at]
            yield self.stall_s, None if self.drops else self.body[self.break_at :]
            return
        for index, chunk in enumerate(self.chunks):
            offset = self.offset_s(index) if self.paced else 0.0
            if index == self.break_at and self.drops:
                yield offset, None
                return
            yield offset, chunk


def error_body(status: int, message: str, code: str, param: str | None = None) -> bytes:
    """An error in the OpenAI API's format (``{"error": {message, type, param, code}}``)."""
    if status == 429:
        kind = "rate_limit_error"
    elif 400 <= status < 500:
        kind = "invalid_request_error"
    else:
        kind = "server_error"
    payload = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return json.dumps(payload).encode()


def error_reply(
    status: int,
    message: str,
    code: str,
    headers: dict[str, str] | None = None,
    param: str | None = None,
) -> MockReply:
    """A reply carrying an error in the OpenAI API's format."""
    return MockReply(
        status,
        {"content-type": "application/json", **(headers or {})},
        error_body(status, message, code, param),
    )
