"""OpenAI response bodies: the ``chat.completion`` object and ``chat.completion.chunk`` SSE."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from bench.referee.protocols import Completion, Protocol, argument_pieces, content_pieces

_ids = itertools.count(1)
FINGERPRINT = "fp_schedbench_mock"


def _new_id() -> str:
    return f"chatcmpl-mock{next(_ids):08d}"


def completion_body(completion: Completion, model: str, usage: dict[str, int]) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` object."""
    message = dict(completion.message)
    message.setdefault("content", None)
    message.setdefault("refusal", None)
    return {
        "id": _new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": FINGERPRINT,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": completion.finish_reason,
            }
        ],
        "usage": usage,
    }


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def chunks(
    completion: Completion, model: str, usage: dict[str, int] | None, protocol: Protocol
) -> list[bytes]:
    """The SSE events of a streamed answer, ``data: [DONE]`` included."""
    base = {
        "id": _new_id(),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": FINGERPRINT,
    }
    with_usage = usage is not None

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        payload = {
            **base,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if with_usage:
            payload["usage"] = None
        return _event(payload)

    message = completion.message
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if message.get("content"):
        events += [chunk({"content": piece}) for piece in content_pieces(message["content"])]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": function["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in argument_pieces(function["arguments"])
        ]
    if protocol == "functions" and message.get("function_call"):
        function = message["function_call"]
        events.append(chunk({"function_call": {"name": function["name"], "arguments": ""}}))
        events += [
            chunk({"function_call": {"arguments": piece}})
            for piece in argument_pieces(function["arguments"])
        ]
    events.append(chunk({}, completion.finish_reason))
    if with_usage:
        events.append(_event({**base, "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events


def payload_indices(count: int, with_usage: bool) -> range:
    """Which of ``chunks()``'s events carry content or tool-call fragments: all but the role
    chunk before them and the finish chunk, the usage chunk and ``[DONE]`` after them."""
    return range(1, count - 2 - int(with_usage))
