"""Chat clients on httpx: plain and streamed calls, typed responses, retries.

``HTTPChatClient`` holds what every provider shares (connection reuse, timeouts, retries,
the streaming contract below); a provider is a subclass that says how its requests and
answers look: its path, headers, request body, answer parser and stream decoder.
``OpenAIChatClient`` here (``POST {base_url}/chat/completions``); ``AnthropicChatClient``
in ``scheduler.anthropic`` (``POST {base_url}/v1/messages``). Both take and return the
agent's own conversation shape (OpenAI chat messages and tool schemas, ``ChatResponse``).

Retries (408/409/429/5xx, timeouts, dropped connections, bodies or streams that are broken
or cut short) happen here, inside one call: they never count as agent steps. The delay is
the server's ``Retry-After`` (or ``retry-after-ms``) when it gives one within
``max_retry_after_s`` — a longer one fails the call at once, saying the wait — else
exponential backoff with jitter.

Time has two knobs. ``timeout`` bounds one attempt: a plain answer must arrive within it, a
streamed one must start within it and never go silent longer (an idle timeout between
chunks, enforced by a watchdog even for transports that ignore httpx's read timeout).
``deadline`` bounds the whole call, retries and backoff included.

A streamed call is retried only while nothing has been passed to ``on_delta``: once text
has reached a consumer, a failure raises ``LLMStreamInterrupted`` instead (a retry would
repeat the text or splice two answers). A stream must end with a finish reason; one that
does not is truncated. Every failure of the network or the server is an ``LLMError``.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Protocol, Self

import httpx

from scheduler._timeout import DeadlineExceeded, Watchdog, with_timeout
from scheduler.errors import (
    LLMConnectionError,
    LLMError,
    LLMResponseError,
    LLMStatusError,
    LLMStreamInterrupted,
    LLMTimeout,
)
from scheduler.types import ChatResponse, OnDelta, OnRetry, RetryInfo, TokenUsage, ToolCall

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
_PARSE_ERRORS = (ValueError, KeyError, IndexError, TypeError, AttributeError)


class _Retryable(Exception):
    """Internal: one failed attempt that may be retried."""

    def __init__(
        self, error: LLMError, status: int | None = None, retry_after: float | None = None
    ):
        self.error, self.status, self.retry_after = error, status, retry_after


def _transport_error(exc: Exception, timeout: float | None) -> _Retryable | LLMError:
    """An exception of httpx (or of the socket under it) as the attempt's failure."""
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return _Retryable(LLMTimeout(timeout))
    if isinstance(exc, httpx.DecodingError):
        return _Retryable(
            LLMResponseError(f"the response body could not be decoded: DecodingError: {exc}")
        )
    if isinstance(exc, httpx.TooManyRedirects | httpx.UnsupportedProtocol | httpx.InvalidURL):
        return LLMConnectionError(f"{type(exc).__name__}: {exc}")
    return _Retryable(LLMConnectionError(f"{type(exc).__name__}: {exc}"))


_TRANSPORT_ERRORS = (httpx.HTTPError, httpx.InvalidURL, OSError)


class StreamDecoder(Protocol):
    """Turns a streamed answer's lines into a ``ChatResponse`` (one per attempt).

    ``feed`` takes each line of the body (SSE ``event:`` / ``data:`` lines, blank lines) and
    returns True when the stream is complete; it may raise ``_Retryable`` or an ``LLMError``
    (an error event in the stream) or a parse error (``ValueError`` …). ``delivered`` counts
    the characters passed to ``on_delta``; ``finish_reason`` stays None until the stream
    said why it ended (else the stream was truncated)."""

    finish_reason: str | None
    delivered: int

    def feed(self, line: str) -> bool: ...

    def result(self) -> ChatResponse: ...


class HTTPChatClient:
    """A chat API over httpx; reuses one connection pool. Subclasses name the provider.

    ``http_client``: an ``httpx.AsyncClient`` to send through (connection pool, transport,
    proxies...). When given, the caller owns it and this client never closes it. Otherwise
    the client makes its own (over ``transport`` if given) and ``aclose()`` closes it.
    ``timeout``: one attempt (a plain answer; a stream's start and its idle gaps);
    ``deadline``: the whole call, retries included (None: no overall limit).
    ``base_url`` and ``model`` default to the provider's (``default_base_url``,
    ``default_model``).
    """

    provider: ClassVar[str]  # the OpenTelemetry GenAI provider name: openai, anthropic
    path: ClassVar[str]  # appended to base_url
    default_base_url: ClassVar[str]
    default_model: ClassVar[str]
    retry_statuses: ClassVar[frozenset[int]] = RETRY_STATUSES

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float | None = 60.0,
        http_client: httpx.AsyncClient | None = None,
        *,
        deadline: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_retries: int = 3,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        jitter: float = 0.25,
        max_retry_after_s: float = 60.0,
        headers: dict[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ):
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.model = model or self.default_model
        self.timeout = timeout
        self.deadline = deadline
        self.max_retries = max_retries
        self.backoff_base_s, self.backoff_max_s, self.jitter = backoff_base_s, backoff_max_s, jitter
        self.max_retry_after_s = max_retry_after_s
        self._url = self.base_url + self.path
        self._headers = {**(headers or {}), **self._provider_headers(api_key)}
        self._external = http_client
        self._transport = transport
        self._own: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._sleep, self._rng = sleep, rng

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"

    # -- what a provider says ------------------------------------------------------------

    def _provider_headers(self, api_key: str | None) -> dict[str, str]:
        """The headers every request carries (authentication, API version)."""
        raise NotImplementedError

    def _body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        """The request body for the agent's conversation and tool schemas."""
        raise NotImplementedError

    def _parse(self, data: Any) -> ChatResponse:
        """A non-streamed answer's JSON -> ChatResponse (may raise a parse error)."""
        raise NotImplementedError

    def _decoder(self, started: float, on_delta: OnDelta | None) -> StreamDecoder:
        """A fresh decoder for one streamed attempt started at ``started`` (perf_counter)."""
        raise NotImplementedError

    # -- connection reuse --------------------------------------------------------------

    def _client(self) -> httpx.AsyncClient:
        if self._external is not None:
            return self._external
        loop = asyncio.get_running_loop()
        if self._own is None or self._own_loop is not loop:
            # an AsyncClient's pool belongs to one event loop; run_sync() closes the one it
            # used (see LightweightAgent.run_sync), a long-lived loop keeps its pool
            self._own = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
                transport=self._transport,
            )
            self._own_loop = loop
        return self._own

    async def aclose(self) -> None:
        """Close the connection pool this client created (never an injected one). The
        client stays usable: the next call opens a new pool."""
        own, self._own, self._own_loop = self._own, None, None
        if own is not None:
            await own.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- calls ---------------------------------------------------------------------------

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        on_retry: OnRetry | None = None,
    ) -> ChatResponse:
        """One non-streamed chat completion (retried as configured)."""
        body = self._body(messages, tools, params, stream=False)
        return await self._with_retries(body, timeout, deadline, on_retry, None, stream=False)

    async def complete_streaming(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        on_retry: OnRetry | None = None,
        on_delta: OnDelta | None = None,
    ) -> ChatResponse:
        """One streamed chat completion: content deltas go to ``on_delta`` as they arrive;
        returns the accumulated answer (content, tool calls from fragments, usage, TTFT).
        Retried only while nothing has been passed to ``on_delta``."""
        body = self._body(messages, tools, params, stream=True)
        return await self._with_retries(body, timeout, deadline, on_retry, on_delta, stream=True)

    async def _with_retries(
        self,
        body: dict[str, Any],
        timeout: float | None,
        deadline: float | None,
        on_retry: OnRetry | None,
        on_delta: OnDelta | None,
        *,
        stream: bool,
    ) -> ChatResponse:
        timeout = self.timeout if timeout is None else timeout
        deadline = self.deadline if deadline is None else deadline
        loop = asyncio.get_running_loop()
        ends = None if deadline is None else loop.time() + deadline
        attempt = 0
        while True:
            attempt += 1
            try:
                if stream:
                    response = await self._attempt_stream(body, timeout, ends, deadline, on_delta)
                else:
                    response = await self._attempt(body, timeout, ends, deadline)
            except _Retryable as failed:
                retry = failed
            except LLMError as exc:
                exc.attempts = attempt
                raise
            else:
                response.attempts = attempt
                return response
            error = retry.error
            error.attempts = attempt
            if attempt > self.max_retries:
                raise error
            wait = retry.retry_after
            if wait is not None and wait > self.max_retry_after_s:
                error.note = (
                    f"the server asked to retry after {wait:g}s, more than "
                    f"max_retry_after_s={self.max_retry_after_s:g}: not retried"
                )
                raise error
            delay = self._delay(attempt, wait)
            if ends is not None and loop.time() + delay >= ends:
                error.note = f"no time left for a retry within the deadline of {deadline:g}s"
                raise error
            if on_retry is not None:
                on_retry(RetryInfo(attempt, delay, str(error), retry.status, retry.retry_after))
            await self._sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after_s:
            return retry_after
        backoff = min(self.backoff_base_s * 2.0 ** (attempt - 1), self.backoff_max_s)
        return backoff * (1 - self.jitter * self._rng())

    async def _attempt(
        self,
        body: dict[str, Any],
        timeout: float | None,
        ends: float | None,
        deadline: float | None,
    ) -> ChatResponse:
        limit, by_deadline = timeout, False
        if ends is not None:
            left = ends - asyncio.get_running_loop().time()
            if limit is None or left < limit:
                limit, by_deadline = max(left, 0.0), True
        post = self._client().post(self._url, json=body, headers=self._headers or None)
        try:
            response = await with_timeout(post, limit)
        except DeadlineExceeded:
            if by_deadline:
                raise LLMTimeout(deadline, kind="deadline") from None
            raise _Retryable(LLMTimeout(timeout)) from None
        except _TRANSPORT_ERRORS as exc:
            failure = _transport_error(exc, timeout)
            raise failure from None
        if response.status_code != 200:
            raise _status_error(response, response.content, self.retry_statuses)
        try:
            return self._parse(response.json())
        except _PARSE_ERRORS as exc:
            raise _Retryable(
                LLMResponseError(f"not a chat completion: {type(exc).__name__}: {exc}")
            ) from None

    async def _attempt_stream(
        self,
        body: dict[str, Any],
        timeout: float | None,
        ends: float | None,
        deadline: float | None,
        on_delta: OnDelta | None,
    ) -> ChatResponse:
        acc = self._decoder(time.perf_counter(), on_delta)
        watchdog = Watchdog(timeout, ends)
        failure: _Retryable | LLMError
        try:
            async with asyncio.timeout(None) as cut:
                watchdog.start(cut)
                async with self._client().stream(
                    "POST", self._url, json=body, headers=self._headers or None
                ) as response:
                    if response.status_code != 200:
                        raw = await response.aread()
                        raise _status_error(response, raw, self.retry_statuses)
                    async for line in response.aiter_lines():
                        watchdog.touch()
                        if acc.feed(line):
                            break
            if acc.finish_reason is not None:
                return acc.result()
            failure = _Retryable(
                LLMResponseError("the stream ended without a finish reason (truncated)")
            )
        except (_Retryable, LLMError) as exc:
            # a status error (nothing delivered yet) or an error event in the stream
            failure = exc
        except TimeoutError as exc:
            if watchdog.fired == "deadline":
                failure = LLMTimeout(deadline, kind="deadline")
            elif watchdog.fired == "idle":
                failure = _Retryable(LLMTimeout(timeout, kind="idle"))
            else:
                failure = _transport_error(exc, timeout)
        except _PARSE_ERRORS as exc:
            failure = _Retryable(LLMResponseError(f"bad SSE chunk: {type(exc).__name__}: {exc}"))
        except _TRANSPORT_ERRORS as exc:
            failure = _transport_error(exc, timeout)
        finally:
            watchdog.stop()
        if acc.delivered:
            cause = failure.error if isinstance(failure, _Retryable) else failure
            raise LLMStreamInterrupted(acc.delivered, cause) from None
        raise failure from None


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


def _status_error(
    response: httpx.Response, raw: bytes, retry_statuses: frozenset[int] = RETRY_STATUSES
) -> Exception:
    """A non-200 answer as an ``LLMStatusError`` (retryable for ``retry_statuses``); the
    message from OpenAI's and Anthropic's error format alike (``{"error": {"message"}}``)."""
    try:
        message = json.loads(raw)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = raw[:300].decode("utf-8", "replace") or response.reason_phrase
    retry_after = _retry_after(response.headers)
    error = LLMStatusError(response.status_code, message, retry_after=retry_after)
    if response.status_code in retry_statuses:
        return _Retryable(error, response.status_code, retry_after)
    return error


class OpenAIChatClient(HTTPChatClient):
    """Calls ``POST {base_url}/chat/completions`` (OpenAI and OpenAI-compatible servers)."""

    provider = "openai"
    path = "/chat/completions"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-4o-mini"

    def _provider_headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

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

    def _parse(self, data: Any) -> ChatResponse:
        return parse_completion(data)

    def _decoder(self, started: float, on_delta: OnDelta | None) -> StreamDecoder:
        return _StreamAccumulator(started, on_delta)


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
        self.delivered = 0  # characters passed to on_delta

    def feed(self, line: str) -> bool:
        """One line of the SSE body; True at ``data: [DONE]``."""
        if line.startswith("data:"):
            data = line[5:].strip()
            if data == "[DONE]":
                return True
            self.add(json.loads(data))
        return False

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
                    self.delivered += len(text)
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
