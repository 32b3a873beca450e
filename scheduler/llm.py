"""An OpenAI-compatible chat client on httpx: plain and streamed calls, typed responses, retries.

Retries (429, 5xx, timeouts, connection errors) happen here, inside one call: they never
count as agent steps. The delay is the server's ``Retry-After`` (or ``retry-after-ms``) when
it gives one within ``max_retry_after_s``, else exponential backoff with jitter.

The timeout is a deadline for the whole call (``asyncio.timeout``), enforced even by
transports that ignore httpx's per-phase timeouts (in-process mocks, slow trickling servers).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from scheduler._timeout import with_timeout
from scheduler.errors import (
    LLMConnectionError,
    LLMError,
    LLMResponseError,
    LLMStatusError,
    LLMTimeout,
)
from scheduler.models import ChatResponse, OnDelta, OnRetry, RetryInfo, TokenUsage, ToolCall

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class _Retryable(Exception):
    """Internal: one failed attempt that may be retried."""

    def __init__(
        self, error: LLMError, status: int | None = None, retry_after: float | None = None
    ):
        self.error, self.status, self.retry_after = error, status, retry_after


class OpenAIChatClient:
    """Calls ``POST {base_url}/chat/completions``; reuses one connection pool.

    ``http_client``: an ``httpx.AsyncClient`` to send through (connection pool, transport,
    proxies...). When given, the caller owns it and this client never closes it.
    """

    def __init__(
        self,
        base_url: str = "https://api.openai.com/v1",
        model: str = "gpt-4o-mini",
        api_key: str | None = None,
        timeout: float | None = 60.0,
        http_client: httpx.AsyncClient | None = None,
        *,
        max_retries: int = 3,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        jitter: float = 0.25,
        max_retry_after_s: float = 60.0,
        headers: dict[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base_s, self.backoff_max_s, self.jitter = backoff_base_s, backoff_max_s, jitter
        self.max_retry_after_s = max_retry_after_s
        self._url = self.base_url + "/chat/completions"
        self._headers = dict(headers or {})
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._external = http_client
        self._own: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._sleep, self._rng = sleep, rng

    def __repr__(self) -> str:
        return f"OpenAIChatClient(base_url={self.base_url!r}, model={self.model!r})"

    # -- connection reuse --------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._external is not None:
            return self._external
        loop = asyncio.get_running_loop()
        if self._own is None or self._own_loop is not loop:
            # an AsyncClient's pool belongs to one event loop (run_sync makes a new one each time)
            self._own = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
            )
            self._own_loop = loop
        return self._own

    async def aclose(self) -> None:
        """Close the connection pool this client created (never an injected one)."""
        if self._own is not None:
            await self._own.aclose()
            self._own = None

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- calls ---------------------------------------------------------------------------

    def _body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if params:
            body.update(params)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_retry: OnRetry | None = None,
    ) -> ChatResponse:
        """One non-streamed chat completion (retried as configured)."""
        body = self._body(messages, tools, params, stream=False)
        return await self._with_retries(self._attempt, body, timeout, on_retry, None)

    async def complete_streaming(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_retry: OnRetry | None = None,
        on_delta: OnDelta | None = None,
    ) -> ChatResponse:
        """One streamed chat completion: content deltas go to ``on_delta`` as they arrive;
        returns the accumulated answer (content, tool calls from fragments, usage, TTFT).
        Retried only if it fails before the first delta."""
        body = self._body(messages, tools, params, stream=True)
        return await self._with_retries(self._attempt_stream, body, timeout, on_retry, on_delta)

    async def _with_retries(
        self,
        attempt_fn: Any,
        body: dict[str, Any],
        timeout: float | None,
        on_retry: OnRetry | None,
        on_delta: OnDelta | None,
    ) -> ChatResponse:
        timeout = self.timeout if timeout is None else timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await with_timeout(attempt_fn(body, on_delta), timeout)
            except _Retryable as failed:
                retry = failed
            except LLMError as exc:
                exc.attempts = attempt
                raise
            except (TimeoutError, httpx.TimeoutException):
                retry = _Retryable(LLMTimeout(timeout, attempts=attempt))
            except httpx.TransportError as exc:
                retry = _Retryable(
                    LLMConnectionError(f"{type(exc).__name__}: {exc}", attempts=attempt)
                )
            else:
                response.attempts = attempt
                return response
            error = retry.error
            error.attempts = attempt
            if attempt > self.max_retries:
                raise error
            delay = self._delay(attempt, retry.retry_after)
            if on_retry is not None:
                on_retry(RetryInfo(attempt, delay, str(error), retry.status, retry.retry_after))
            await self._sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after_s:
            return retry_after
        backoff = min(self.backoff_base_s * 2 ** (attempt - 1), self.backoff_max_s)
        return backoff * (1 - self.jitter * self._rng())

    async def _attempt(self, body: dict[str, Any], _: OnDelta | None) -> ChatResponse:
        response = await self._client().post(self._url, json=body, headers=self._headers or None)
        if response.status_code != 200:
            raise _status_error(response, response.content)
        try:
            return parse_completion(response.json())
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMResponseError(f"not a chat completion: {type(exc).__name__}: {exc}") from None

    async def _attempt_stream(self, body: dict[str, Any], on_delta: OnDelta | None) -> ChatResponse:
        started = time.perf_counter()
        client = self._client()
        async with client.stream(
            "POST", self._url, json=body, headers=self._headers or None
        ) as response:
            if response.status_code != 200:
                raise _status_error(response, await response.aread())
            acc = _StreamAccumulator(started, on_delta)
            try:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        data = line[5:].strip()
                        if data == "[DONE]":
                            break
                        acc.add(json.loads(data))
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                raise LLMResponseError(f"bad SSE chunk: {type(exc).__name__}: {exc}") from None
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if acc.ttft_s is None:
                    raise  # nothing emitted yet: safe to retry
                raise LLMConnectionError(f"stream broke after the first delta: {exc}") from None
            return acc.result()


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _status_error(response: httpx.Response, raw: bytes) -> Exception:
    try:
        message = json.loads(raw)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = raw[:300].decode("utf-8", "replace") or response.reason_phrase
    retry_after = _retry_after(response.headers)
    error = LLMStatusError(response.status_code, message, retry_after=retry_after)
    if response.status_code in RETRY_STATUSES:
        return _Retryable(error, response.status_code, retry_after)
    return error


def parse_completion(data: dict[str, Any]) -> ChatResponse:
    """A ``chat.completion`` JSON object -> ChatResponse."""
    choice = data["choices"][0]
    message = choice["message"]
    raw_calls = message.get("tool_calls")
    calls = (
        [
            ToolCall(c["id"], c["function"]["name"], c["function"].get("arguments") or "")
            for c in raw_calls
        ]
        if raw_calls
        else []
    )
    usage = data.get("usage")
    return ChatResponse(
        message.get("content"),
        calls,
        choice.get("finish_reason"),
        TokenUsage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
        if usage
        else None,
        data.get("model"),
        data.get("id"),
    )


class _StreamAccumulator:
    """Joins ``chat.completion.chunk`` deltas: content pieces and tool-call fragments."""

    def __init__(self, started: float, on_delta: OnDelta | None):
        self.started, self.on_delta = started, on_delta
        self.parts: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, [argument pieces]]
        self.finish_reason: str | None = None
        self.usage: TokenUsage | None = None
        self.model: str | None = None
        self.id: str | None = None
        self.ttft_s: float | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        self.model = chunk.get("model") or self.model
        self.id = chunk.get("id") or self.id
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if text:
                self._first()
                self.parts.append(text)
                if self.on_delta is not None:
                    self.on_delta(text)
            for fragment in delta.get("tool_calls") or ():
                self._first()
                entry = self.calls.setdefault(fragment.get("index", 0), [None, "", []])
                if fragment.get("id"):
                    entry[0] = fragment["id"]
                function = fragment.get("function") or {}
                if function.get("name"):
                    entry[1] += function["name"]
                if function.get("arguments"):
                    entry[2].append(function["arguments"])
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        usage = chunk.get("usage")
        if usage:
            self.usage = TokenUsage(
                usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
            )

    def _first(self) -> None:
        if self.ttft_s is None:
            self.ttft_s = time.perf_counter() - self.started

    def result(self) -> ChatResponse:
        calls = [
            ToolCall(entry[0] or f"call_{index}", entry[1], "".join(entry[2]))
            for index, entry in sorted(self.calls.items())
        ]
        content = "".join(self.parts) if self.parts else None
        return ChatResponse(
            content, calls, self.finish_reason, self.usage, self.model, self.id, ttft_s=self.ttft_s
        )
