"""Stream faults: a scripted turn's answer broken on its way to the client.

``break_reply`` turns the mock's real answer into the broken one a scenario's
``fault: {stream: ..., first_token_s: ...}`` asks for, the same way for a streamed answer
(its SSE events) and a plain one (its JSON body), so that every engine meets the fault
whether it streams or not:

============  ====================================  ==========================================
fault         streamed answer                       plain answer
============  ====================================  ==========================================
``truncate``  ends cleanly early: no finish          the body cut mid-JSON (its
              reason, no usage, no ``[DONE]``        ``content-length`` says that is all)
``drop``      the connection closes mid-stream       the connection closes mid-body
``corrupt``   one ``data:`` line is not JSON         one NUL byte mid-body (no JSON allows it)
``stall``     silence for ``stall_s`` mid-stream,    the same mid-body
              then the rest (``resume``) or a drop
first token   headers at once, the first event      the body ``first_token_s`` later
              ``first_token_s`` later
============  ====================================  ==========================================

The break comes after ``at`` of the answer's chunks (those that carry content or tool-call
fragments; at least one is sent and one withheld when there are two), or of a plain body's
bytes. Truncating and corrupting change the reply's bytes here; a stall and a drop are
timing, played by the transports from ``MockReply.deliveries()``. A dropped connection
looks to the client like a real one: the in-process transports raise the client library's
own ``RemoteProtocolError`` (``DROPPED_CHUNKED`` / ``dropped_body``), the loopback server
closes the socket.
"""

from __future__ import annotations

from bench.referee.reply import MockReply
from scenarios.schema import Fault

# what httpx (h11) says when the server closes the socket mid-body
DROPPED_CHUNKED = (
    "peer closed connection without sending complete message body (incomplete chunked read)"
)


def dropped_body(received: int, expected: int) -> str:
    """httpx's message for a length-delimited body cut short by the server."""
    return (
        "peer closed connection without sending complete message body "
        f"(received {received} bytes, expected {expected})"
    )


def break_reply(reply: MockReply, fault: Fault, payload: range | None) -> MockReply:
    """``reply`` (a 200 answer) broken as ``fault`` says. ``payload``: the indices of a
    streamed reply's chunks that carry the answer (``sse.payload_indices``); None for a
    plain body."""
    if fault.first_token_s:
        if reply.chunks is None:
            reply.delay_s += fault.first_token_s
        else:
            reply.lead_s = fault.first_token_s
    if fault.stream is None:
        return reply
    if reply.chunks is not None and payload is not None:
        at = _chunk_index(payload, fault.at)
    else:
        at = min(max(round(len(reply.body) * fault.at), 1), max(len(reply.body) - 1, 1))
    match fault.stream:
        case "truncate":
            if reply.chunks is not None:
                reply.chunks = reply.chunks[:at]
            else:
                reply.body = reply.body[:at]
        case "corrupt":
            if reply.chunks is not None:
                reply.chunks[at] = corrupt_event(reply.chunks[at])
            else:
                reply.body = reply.body[:at] + b"\x00" + reply.body[at:]
        case "drop" | "stall":
            reply.break_at = at
            reply.stall_s = fault.stall_s or 0.0
            reply.drops = fault.stream == "drop" or not fault.resume
            if reply.chunks is None:
                reply.headers = {**reply.headers, "content-length": str(len(reply.body))}
    return reply


def _chunk_index(payload: range, at: float) -> int:
    size = len(payload)
    before = min(max(round(size * at), min(1, size - 1)), max(size - 1, 0))
    return payload.start + before


def corrupt_event(event: bytes) -> bytes:
    """An SSE event whose JSON is cut in half: ``data: {"id":"chatcmpl-…","obj`` (still one
    well-formed event, so the client's SSE parser hands the broken JSON on). The lines before
    the ``data:`` line (Anthropic's ``event: NAME``) are kept."""
    head, marker, data = event.rpartition(b"data: ")
    data = data.rstrip(b"\n")
    return head + marker + data[: len(data) // 2] + b"\n\n"
