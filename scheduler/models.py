"""Typed LLM responses and the protocol a chat model must speak to drive the agent.

Kept apart from ``llm.py`` so that the agent can be imported (and tested with a fake model)
without importing httpx.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(slots=True)
class ToolCall:
    """One tool call as the LLM asked for it. ``arguments`` is the raw JSON text (untrusted)."""

    id: str
    name: str
    arguments: str

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(slots=True)
class TokenUsage:
    """Token counts as the server reported them for one response."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(slots=True)
class ChatResponse:
    """One assistant answer: text, tool calls, why it stopped, and the server's usage."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    model: str | None = None
    id: str | None = None
    attempts: int = 1
    ttft_s: float | None = None  # streaming only: request start -> first delta

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        if self.tool_calls:
            return {
                "role": "assistant",
                "content": self.content,
                "tool_calls": [call.to_message() for call in self.tool_calls],
            }
        return {"role": "assistant", "content": self.content}


@dataclass(slots=True)
class RetryInfo:
    """Passed to ``on_retry`` before the client sleeps and tries again."""

    attempt: int  # the attempt that failed, from 1
    delay_s: float  # how long the client waits before the next attempt
    error: str  # what went wrong, e.g. "HTTP 429: rate limited"
    status_code: int | None = None
    retry_after_s: float | None = None  # what the server asked for, if it did


OnRetry = Callable[[RetryInfo], None]
OnDelta = Callable[[str], None]


class ChatModel(Protocol):
    """What the agent needs from an LLM client. ``OpenAIChatClient`` implements it."""

    model: str

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_retry: OnRetry | None = None,
    ) -> ChatResponse: ...

    async def complete_streaming(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_retry: OnRetry | None = None,
        on_delta: OnDelta | None = None,
    ) -> ChatResponse: ...
