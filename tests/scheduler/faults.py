"""Broken LLM servers built in the tests: an httpx transport that plays scripted responses.

``LLMScript(response, response, ...)`` answers the n-th request with the n-th response and
fails loudly on an unexpected extra request; ``unplayed`` says what was not used. The
responses are built with the helpers below: whole SSE streams, streams that stop without a
finish reason, drop the connection, send a corrupt chunk or stall, HTTP error statuses,
gzip garbage. No socket is opened (``httpx.MockTransport``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from scheduler import OpenAIChatClient

BASE_URL = "http://llm.test/v1"
Response = httpx.Response | Callable[[], httpx.Response]


class UnexpectedRequest(AssertionError):
    """The client sent more requests than the script has responses."""


def chunk(
    content: str | None = None,
    *,
    tool: dict[str, Any] | None = None,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> bytes:
    """One ``data:`` line of a ``chat.completion.chunk``."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if tool is not None:
        delta["tool_calls"] = [tool]
    body: dict[str, Any] = {
        "id": "chatcmpl-t",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body["choices"] = []
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def text_chunks(*pieces: str, finish: str | None = "stop", done: bool = True) -> list[bytes]:
    """A streamed text answer; ``finish=None, done=False`` is a truncated stream."""
    out = [chunk(p) for p in pieces]
    if finish is not None:
        out.append(chunk(finish=finish))
        out.append(chunk(usage={"prompt_tokens": 10, "completion_tokens": len(pieces)}))
    if done:
        out.append(DONE)
    return out


def tool_chunks(
    name: str, arguments: list[str], *, finish: str | None = "tool_calls"
) -> list[bytes]:
    """A streamed tool call whose arguments arrive in fragments."""
    out = [chunk(tool={"index": 0, "id": "call_1", "function": {"name": name, "arguments": ""}})]
    out += [chunk(tool={"index": 0, "function": {"arguments": a}}) for a in arguments]
    if finish is not None:
        out += [chunk(finish=finish), DONE]
    return out


async def _play(
    parts: list[bytes | float | BaseException],
) -> AsyncIterator[bytes]:
    for part in parts:
        if isinstance(part, BaseException):
            raise part
        if isinstance(part, float):
            await asyncio.sleep(part)
            continue
        yield part


def stream(
    *parts: bytes | float | BaseException, status: int = 200
) -> Callable[[], httpx.Response]:
    """An SSE response playing ``parts``: bytes are sent, a float sleeps (a stall), an
    exception is raised mid-body (a dropped connection)."""

    def make() -> httpx.Response:
        return httpx.Response(
            status, headers={"content-type": "text/event-stream"}, content=_play(list(parts))
        )

    return make


def completion(content: str | None = "ok", *, finish: str = "stop") -> httpx.Response:
    """A plain (non-streamed) chat completion."""
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-t",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        },
    )


def status(code: int, message: str = "scripted", **headers: str) -> httpx.Response:
    return httpx.Response(code, json={"error": {"message": message}}, headers=headers)


def gzip_garbage() -> httpx.Response:
    """A body that claims gzip and is not: httpx raises DecodingError while reading it."""
    return httpx.Response(
        200,
        headers={"content-encoding": "gzip", "content-type": "application/json"},
        content=b"\x1f\x8b\x08\x00garbage-not-gzip",
    )


class LLMScript:
    """Scripted responses behind an ``httpx.MockTransport``; records every request body."""

    def __init__(self, *responses: Response):
        self.responses: list[Response] = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.sleeps: list[float] = []
        self.http = httpx.AsyncClient(transport=httpx.MockTransport(self._handle))

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        if not self.responses:
            raise UnexpectedRequest(f"request {len(self.requests)} has no scripted response")
        response = self.responses.pop(0)
        return response() if callable(response) else response

    @property
    def unplayed(self) -> int:
        return len(self.responses)

    async def sleep(self, delay: float) -> None:
        """The client's backoff sleep: recorded, not waited."""
        self.sleeps.append(delay)
        await asyncio.sleep(0)

    def client(self, **kwargs: Any) -> OpenAIChatClient:
        kwargs.setdefault("sleep", self.sleep)
        kwargs.setdefault("backoff_base_s", 0.01)
        return OpenAIChatClient(base_url=BASE_URL, model="m", http_client=self.http, **kwargs)

    async def aclose(self) -> None:
        await self.http.aclose()


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> httpx.Response:
    """A plain completion that asks for one tool call."""
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-t",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        },
    )


def ask(tool: str, **arguments: Any) -> str:
    """A user message that the routing server answers with a call of ``tool(**arguments)``."""
    return json.dumps({"tool": tool, "args": arguments})


class RoutingLLM:
    """A stateless server for many concurrent runs: a user message written by ``ask()`` gets
    that tool call, a tool result gets the answer ``done: <result>``. Records nothing, so
    it holds no memory of past runs."""

    def __init__(self) -> None:
        self.http = httpx.AsyncClient(transport=httpx.MockTransport(self.route))

    @staticmethod
    def route(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        last = body["messages"][-1]
        if last["role"] == "user":
            wanted = json.loads(last["content"])
            if body.get("stream"):
                return stream(*tool_chunks(wanted["tool"], [json.dumps(wanted["args"])]))()
            return tool_call(wanted["tool"], wanted["args"])
        answer = f"done: {last['content'][:40]}"
        return stream(*text_chunks(answer))() if body.get("stream") else completion(answer)

    def client(self, **kwargs: Any) -> OpenAIChatClient:
        return OpenAIChatClient(base_url=BASE_URL, model="m", http_client=self.http, **kwargs)

    async def aclose(self) -> None:
        await self.http.aclose()
