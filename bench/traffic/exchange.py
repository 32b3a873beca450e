"""One chat-completion call as recorded: the request body, the answer, how long it took.

This is also one line of the JSONL log the proxy writes next to its scenario (and the native
shape ``schedbench scenarios import`` reads; ``logs`` accepts others too)::

    {"started_at": 1767225600.123, "status": 200,
     "request": {<the POST /v1/chat/completions body>},
     "response": {<a chat.completion object; a stream is assembled into one>},
     "timing": {"stream": true, "ttft_ms": 312.4, "total_ms": 1180.2, "gaps_ms": [...]}}

A ``ToolRun`` is one execution of one of the agent's real tools, as the agent reported it
(``bench.traffic.observe``); in the log it is a line of its own::

    {"tool": {"name": "lookup_order", "args": {"order_id": "A123"}, "outcome": "raised",
              "error": "RuntimeError: backend down", "started_at": 1767225600.9,
              "duration_ms": 301.7, "require_confirmation": false}}
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scenarios.schema import MAX_RECORDED_MS, TOOL_NAME_PATTERN, TurnTiming

MAX_EPOCH_S = 1e11  # the year 5138: a larger "epoch seconds" is no time
MAX_ERROR_CHARS = 10_000


@dataclass(frozen=True)
class Exchange:
    """One recorded ``POST /v1/chat/completions``; never holds an HTTP header."""

    request: Any  # the JSON body the client sent (a dict, unless the client sent garbage)
    response: dict[str, Any] | None  # a chat.completion object; None: no usable answer
    status: int
    timing: TurnTiming | None = None
    started_at: float | None = None  # epoch seconds, to put concurrent calls in order
    error: str | None = None  # why there is no usable answer (a cut stream, bad JSON, ...)
    warnings: tuple[str, ...] = ()  # what was recorded only in part, and why

    @property
    def message(self) -> dict[str, Any] | None:
        """The assistant message of the first choice (None: no usable answer)."""
        if self.status != 200 or not isinstance(self.response, dict):
            return None
        choices = self.response.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        message = choices[0].get("message")
        return message if isinstance(message, dict) else None

    @property
    def usage(self) -> dict[str, Any]:
        usage = self.response.get("usage") if isinstance(self.response, dict) else None
        return usage if isinstance(usage, dict) else {}

    def with_bodies(self, request: Any, response: dict[str, Any] | None) -> Exchange:
        return replace(self, request=request, response=response)

    def to_json(self) -> dict[str, Any]:
        """The exchange as one line of the JSONL log."""
        line: dict[str, Any] = {
            "started_at": self.started_at,
            "status": self.status,
            "request": self.request,
            "response": self.response,
        }
        if self.timing is not None:
            line["timing"] = self.timing.model_dump(exclude_none=True)
        if self.error is not None:
            line["error"] = self.error
        if self.warnings:
            line["warnings"] = list(self.warnings)
        return line


class ToolRun(BaseModel):
    """One execution of a real tool, or a confirmation the user refused (the tool did not
    run), as the agent reported it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    args: dict[str, Any] = Field(default_factory=dict)
    outcome: Literal["returned", "raised", "denied"]
    error: str | None = Field(
        default=None,
        max_length=MAX_ERROR_CHARS,
        description="what a raising tool raised, as 'ExceptionType: message'",
    )
    started_at: float | None = Field(default=None, ge=0, le=MAX_EPOCH_S, allow_inf_nan=False)
    duration_ms: float | None = Field(default=None, ge=0, le=MAX_RECORDED_MS, allow_inf_nan=False)
    require_confirmation: bool = Field(
        default=False, description="the tool asks the user before it runs"
    )

    def to_json(self) -> dict[str, Any]:
        """The run as one line of the JSONL log."""
        return {"tool": self.model_dump(exclude_defaults=True) | {"outcome": self.outcome}}
