"""``raw``: the floor. A minimal httpx loop — post, run the tools, append, repeat.

No framework, no retries, no trace, no hooks: just what any agent must do, so its overhead
is the physical limit every other engine is measured against. It still obeys the scenario's
limits that cost nothing: ``max_steps`` (LLM calls), the LLM timeout (httpx), a per-tool
timeout (``asyncio.timeout``) and the run deadline. A tool error, an unknown tool or
malformed arguments become an ``Error: ...`` tool message, and the loop goes on. An HTTP
error from the LLM ends the run as ``failed`` (there is no retry).

With ``RunContext.stream_tokens`` the loop sends ``"stream": true`` and reads the
Server-Sent Events itself (content deltas joined, tool-call fragments merged by index):
the floor of time to first token. ``ttft_ms`` is the time to the first content delta of
the LLM call that gave the final answer. ``complete`` / ``complete_streamed`` are the only
transport-specific parts: ``openai-sdk`` (``openai_sdk.py``) replaces them.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.referee.transport import BASE_URL


class LLMCallFailed(Exception):
    """The LLM call failed: an error status or a transport error (the floor does not retry)."""


@dataclass
class RawPrepared(Prepared):
    client: Any  # httpx.AsyncClient (raw) or openai.AsyncOpenAI (openai-sdk)
    url: str
    model: str
    messages: list[dict[str, Any]]
    tool_schemas: list[dict[str, Any]]
    tools: dict[str, ScenarioTool]


Message = dict[str, Any]


class RawEngine(RecordingEngine):
    async def prepare(self, ctx: Any) -> RawPrepared:
        scenario = ctx.scenario
        tools = build_tools(scenario)
        base_url = ctx.base_url if ctx.transport == "loopback" else (ctx.base_url or BASE_URL)
        messages = [{"role": "system", "content": scenario.system_prompt}]
        messages += [{"role": m.role, "content": m.content} for m in scenario.history]
        messages.append({"role": "user", "content": scenario.user})
        return RawPrepared(
            ctx=ctx,
            accounting=self.accounting(ctx),
            client=self.client(ctx, base_url),
            url=base_url.rstrip("/") + "/chat/completions",
            model=f"scenario/{scenario.name}",
            messages=messages,
            tool_schemas=[tool.openai_schema() for tool in tools],
            tools={tool.name: tool for tool in tools},
        )

    def client(self, ctx: Any, base_url: str) -> Any:
        return self.http_client(ctx, "httpx")

    async def execute(self, p: RawPrepared) -> Outcome:
        complete = self.complete_streamed if p.ctx.stream_tokens else self.complete
        try:
            async with asyncio.timeout(run_timeout_s(p.ctx)) as deadline:
                return await self._loop(p, complete, stream=p.ctx.stream_tokens)
        except TimeoutError:
            if deadline.expired():
                return Outcome("aborted", None, "timeout", error="run deadline exceeded")
            raise

    async def _loop(self, p: RawPrepared, complete: Any, *, stream: bool) -> Outcome:
        limits = p.scenario.limits
        messages = list(p.messages)
        body: dict[str, Any] = {"model": p.model, "messages": messages}
        if stream:
            body["stream"] = True
        if p.tool_schemas:
            body["tools"] = p.tool_schemas
        started = time.perf_counter()
        for _ in range(limits.max_steps):
            try:
                message, first_content_at = await complete(p, body)
            except LLMCallFailed as exc:
                return Outcome("failed", None, "llm_error", error=str(exc))
            calls = message.get("tool_calls")
            if not calls:
                ttft_ms = None if first_content_at is None else (first_content_at - started) * 1000
                return Outcome("completed", message.get("content"), "stop", ttft_ms=ttft_ms)
            messages.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
            )
            results = await asyncio.gather(*(self._call_tool(p, call) for call in calls))
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": result}
                for call, result in zip(calls, results, strict=True)
            )
        return Outcome("aborted", None, "max_steps", error=f"max_steps {limits.max_steps} reached")

    async def complete(self, p: RawPrepared, body: dict[str, Any]) -> tuple[Message, None]:
        """One plain call: the assistant message."""
        try:
            response = await p.client.post(
                p.url, json=body, timeout=p.scenario.limits.llm_timeout_s
            )
        except httpx.HTTPError as exc:
            raise LLMCallFailed(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise LLMCallFailed(f"HTTP {response.status_code}: {response.text[:500]}")
        return response.json()["choices"][0]["message"], None

    async def complete_streamed(
        self, p: RawPrepared, body: dict[str, Any]
    ) -> tuple[Message, float | None]:
        """One streamed call: the assembled message, and when its first content delta came."""
        try:
            return await self._read_stream(p, body)
        except httpx.HTTPError as exc:
            raise LLMCallFailed(f"{type(exc).__name__}: {exc}") from exc

    async def _read_stream(
        self, p: RawPrepared, body: dict[str, Any]
    ) -> tuple[Message, float | None]:
        stream = StreamedMessage()
        timeout = p.scenario.limits.llm_timeout_s
        async with p.client.stream("POST", p.url, json=body, timeout=timeout) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode("utf-8", "replace")
                raise LLMCallFailed(f"HTTP {response.status_code}: {text[:500]}")
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                choices = json.loads(data).get("choices")
                if choices:  # the usage chunk has none
                    stream.add(choices[0].get("delta") or {})
        return stream.message(), stream.first_content_at

    async def _call_tool(self, p: RawPrepared, call: dict[str, Any]) -> str:
        function = call["function"]
        name = function["name"]
        tool = p.tools.get(name)
        if tool is None:
            return f"Error: unknown tool {name!r}; available: {', '.join(p.tools)}"
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError as exc:
            return f"Error: arguments are not valid JSON ({exc})"
        if not isinstance(args, dict):
            return "Error: arguments must be a JSON object"
        timeout = p.scenario.limits.tool_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await tool.acall(**args)
        except TimeoutError:
            return f"Error: tool {name!r} timed out after {timeout:g}s"
        except Exception as exc:
            return f"Error: {type(exc).__name__}: {exc}"


class StreamedMessage:
    """An assistant message assembled from streamed deltas (content joined, tool-call
    fragments merged by index), and when its first content arrived."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.first_content_at: float | None = None

    def add(self, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        if content:
            if self.first_content_at is None:
                self.first_content_at = time.perf_counter()
            self.parts.append(content)
        for fragment in delta.get("tool_calls") or ():
            call = self.calls.setdefault(
                fragment.get("index", 0),
                {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if fragment.get("id"):
                call["id"] = fragment["id"]
            function = fragment.get("function") or {}
            call["function"]["name"] += function.get("name") or ""
            call["function"]["arguments"] += function.get("arguments") or ""

    def message(self) -> Message:
        message: Message = {"role": "assistant", "content": "".join(self.parts) or None}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return message
