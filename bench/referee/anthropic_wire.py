"""Anthropic Messages response bodies: the ``message`` object, its SSE events, its errors.

A scripted turn becomes content blocks (``answer``): its text as a ``text`` block, each tool
call as a ``tool_use`` block whose ``input`` is the parsed arguments, and a ``stop_reason``
(``tool_use`` or ``end_turn``). Streamed (``events``), the answer is the event sequence of
the Messages API, each an ``event: NAME`` line and a ``data: JSON`` line::

    message_start                      the message, empty, with usage.input_tokens
    ping
    content_block_start / _delta / _stop   per block: text_delta pieces (about a word each),
                                       input_json_delta fragments of the arguments text
    message_delta                      stop_reason and usage.output_tokens
    message_stop

Arguments that are not a JSON object (a scenario's malformed ``raw_arguments``) are streamed
verbatim as ``input_json_delta`` fragments, as a model that wrote broken JSON would stream
them; in a plain JSON answer, whose ``input`` must be an object, they become ``{}``.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from bench.referee.protocols import (
    Protocol,
    argument_pieces,
    call_arguments,
    content_pieces,
    react_text,
)
from scenarios.schema import Turn

_ids = itertools.count(1)

# Anthropic's error types by HTTP status (docs: "Errors")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def new_id(prefix: str) -> str:
    return f"{prefix}_mock{next(_ids):08d}"


def error_body(status: int, message: str) -> bytes:
    """An error in Anthropic's format: ``{"type": "error", "error": {"type", "message"}}``."""
    kind = ERROR_TYPES.get(status) or ("invalid_request_error" if status < 500 else "api_error")
    payload = {"type": "error", "error": {"type": kind, "message": message}}
    return json.dumps(payload).encode()


def _input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Answer:
    """One scripted turn as Messages content: blocks, the arguments text of each
    ``tool_use`` block (by block index, what a stream sends), the stop reason, and the text
    billed as output tokens (the same text as for the OpenAI protocol)."""

    blocks: tuple[dict[str, Any], ...]
    arguments: dict[int, str]
    stop_reason: str
    text_for_usage: str


def answer(turn: Turn, answered: int, protocol: Protocol) -> Answer:
    """The content of one turn (``answered``: answers before it, for unique tool ids)."""
    if protocol == "react":
        text = react_text(turn)
        return Answer(({"type": "text", "text": text},), {}, "end_turn", text)
    blocks: list[dict[str, Any]] = []
    if turn.content:
        blocks.append({"type": "text", "text": turn.content})
    arguments: dict[int, str] = {}
    usage_text = turn.content or ""
    for i, call in enumerate(turn.tool_calls):
        text = call_arguments(call)
        arguments[len(blocks)] = text
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id or f"toolu_t{answered}_{i}",
                "name": call.name,
                "input": _input(text),
            }
        )
        usage_text += call.name + text
    stop = "tool_use" if turn.tool_calls else "end_turn"
    return Answer(tuple(blocks), arguments, stop, usage_text)


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def message_body(reply: Answer, model: str, input_tokens: int, output_tokens: int) -> bytes:
    """A non-streamed ``message`` object."""
    payload = {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(reply.blocks),
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": _usage(input_tokens, output_tokens),
    }
    return json.dumps(payload, ensure_ascii=False).encode()


def _event(name: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return f"event: {name}\ndata: {data}\n\n".encode()


def events(
    reply: Answer, model: str, input_tokens: int, output_tokens: int
) -> tuple[list[bytes], range]:
    """The SSE events of a streamed answer, and which of them carry the answer (the block
    events from the first delta to the last: where a scripted stream fault may strike)."""
    message: dict[str, Any] = {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(input_tokens, 1),
    }
    out = [
        _event("message_start", {"type": "message_start", "message": message}),
        _event("ping", {"type": "ping"}),
    ]
    first_delta: int | None = None
    for index, block in enumerate(reply.blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in content_pieces(block["text"])]
        else:
            start = {**block, "input": {}}
            pieces = argument_pieces(reply.arguments[index])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        out.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        if first_delta is None:
            first_delta = len(out)
        out += [
            _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
            for delta in deltas
        ]
        out.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    last = len(out)
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    out.append(
        _event(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        )
    )
    out.append(_event("message_stop", {"type": "message_stop"}))
    return out, range(last if first_delta is None else first_delta, last)
