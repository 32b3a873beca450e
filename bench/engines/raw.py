"""``raw``: the floor. A minimal httpx loop — post, run the tools, append, repeat.

No framework, no retries, no trace, no hooks: just what any agent must do, so its overhead
is the physical limit every other engine is measured against. It still obeys the scenario's
limits that cost nothing: ``max_steps`` (LLM calls), the LLM timeout (httpx), a per-tool
timeout (``asyncio.timeout``) and the run deadline. A tool error, an unknown tool or
malformed arguments become an ``Error: ...`` tool message, and the loop goes on. An HTTP
error from the LLM ends the run as ``failed`` (there is no retry).

With ``RunContext.stream_tokens`` a twin of the loop sends ``"stream": true`` and reads the
Server-Sent Events itself (content deltas joined, tool-call fragments merged by index):
the floor of time to first token. ``ttft_ms`` is the time to the first content delta of
the LLM call that gave the final answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.mockllm.transport import BASE_URL
from bench.tools import ScenarioTool, build_tools


class _HTTPStatus(Exception):
    """The LLM answered with an error status (the raw loop does not retry)."""


@dataclass
class RawPrepared(Prepared):
    client: httpx.AsyncClient
    url: str
    model: str
    messages: list[dict[str, Any]]
    tool_schemas: list[dict[str, Any]]
    tools: dict[str, ScenarioTool]


class RawEngine(RecordingEngine):
    name = "raw"
    description = "a minimal httpx loop: post, run tools, append, repeat (the floor)"

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
            client=self.http_client(ctx, "httpx"),
            url=base_url.rstrip("/") + "/chat/completions",
            model=f"scenario/{scenario.name}",
            messages=messages,
            tool_schemas=[tool.openai_schema() for tool in tools],
            tools={tool.name: tool for tool in tools},
        )

    async def execute(self, p: RawPrepared) -> Outcome:
        try:
            async with asyncio.timeout(run_timeout_s(p.ctx)) as deadline:
                if p.ctx.stream_tokens:
                    return await self._stream_loop(p)
                return await self._loop(p)
        except TimeoutError:
            if deadline.expired():
                return Outcome("aborted", None, "timeout", error="run deadline exceeded")
            raise

    async def _loop(self, p: RawPrepared) -> Outcome:
        limits = p.scenario.limits
        messages = list(p.messages)
        body: dict[str, Any] = {"model": p.model, "messages": messages}
        if p.tool_schemas:
            body["tools"] = p.tool_schemas
        for _ in range(limits.max_steps):
            try:
                response = await p.client.post(p.url, json=body, timeout=limits.llm_timeout_s)
            except httpx.HTTPError as exc:
                return Outcome("failed", None, "llm_error", error=f"{type(exc).__name__}: {exc}")
            if response.status_code != 200:
                return Outcome(
                    "failed",
                    None,
                    "llm_error",
                    error=f"HTTP {response.status_code}: {response.text[:500]}",
                )
            message = response.json()["choices"][0]["message"]
            calls = message.get("tool_calls")
            if not calls:
                return Outcome("completed", message.get("content"), "stop")
            messages.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
            )
            results = await asyncio.gather(*(self._call_tool(p, call) for call in calls))
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": result}
                for call, result in zip(calls, results, strict=True)
            )
        return Outcome("aborted", None, "max_steps", error=f"max_steps {limits.max_steps} reached")

    async def _stream_loop(self, p: RawPrepared) -> Outcome:
        """The same loop, every call streamed (kept apart so the plain loop stays as timed)."""
        limits = p.scenario.limits
        messages = list(p.messages)
        body: dict[str, Any] = {"model": p.model, "messages": messages, "stream": True}
        if p.tool_schemas:
            body["tools"] = p.tool_schemas
        started = time.perf_counter()
        for _ in range(limits.max_steps):
            try:
                message, first_content_at = await self._post_streamed(p, body)
            except httpx.HTTPError as exc:
                return Outcome("failed", None, "llm_error", error=f"{type(exc).__name__}: {exc}")
            except _HTTPStatus as exc:
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

    async def _post_streamed(
        self, p: RawPrepared, body: dict[str, Any]
    ) -> tuple[dict[str, Any], float | None]:
        """One streamed call: the assembled message, and when its first content delta came."""
        limits = p.scenario.limits
        parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        first_content_at = None
        async with p.client.stream(
            "POST", p.url, json=body, timeout=limits.llm_timeout_s
        ) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode("utf-8", "replace")
                raise _HTTPStatus(f"HTTP {response.status_code}: {text[:500]}")
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                choices = json.loads(data).get("choices")
                if not choices:
                    continue  # the usage chunk
                delta = choices[0].get("delta") or {}
                content = delta.get("content")
                if content:
                    if first_content_at is None:
                        first_content_at = time.perf_counter()
                    parts.append(content)
                for fragment in delta.get("tool_calls") or ():
                    call = calls.setdefault(
                        fragment.get("index", 0),
                        {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                    )
                    if fragment.get("id"):
                        call["id"] = fragment["id"]
                    function = fragment.get("function") or {}
                    call["function"]["name"] += function.get("name") or ""
                    call["function"]["arguments"] += function.get("arguments") or ""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(parts) or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return message, first_content_at

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
