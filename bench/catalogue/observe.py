"""What a cell's runs did, seen at the edges: the requests the mock answered, the tools that ran.

A cell's effect is judged on these observations only — never on what the framework reports
about itself — so the same check judges every engine. The types are plain data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    """One request the mock received (in arrival order)."""

    turn: int | None  # the script turn it asked for (None: the mock could not place it)
    model: str
    status: int
    messages: tuple[dict[str, Any], ...]
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def texts(self) -> list[str]:
        """The text of each message (tool results and assistant turns included)."""
        return [_text(m.get("content")) for m in self.messages]

    def tool_messages(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("role") == "tool"]


@dataclass(frozen=True)
class ToolRun:
    """One execution of a scenario tool, as the tool saw it."""

    name: str
    args: dict[str, Any]
    ok: bool
    error: str | None
    duration_ms: float


@dataclass
class RunObservation:
    """One request of a cell (a user's question): what reached the mock and the tools."""

    user: str
    question: str
    requests: list[Request] = field(default_factory=list)
    tools: list[ToolRun] = field(default_factory=list)
    raised: str | None = None  # the exception the run raised ("Type: message"), if any


@dataclass
class Observation:
    """Every run of one cell, and the trace text that left the process during them."""

    runs: list[RunObservation] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)

    @property
    def requests(self) -> list[Request]:
        return [r for run in self.runs for r in run.requests]

    @property
    def tools(self) -> list[ToolRun]:
        return [t for run in self.runs for t in run.tools]


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, ensure_ascii=False)


def request_from_mock(recorded: Any) -> Request:
    """A ``bench.referee.RecordedRequest`` as a ``Request``."""
    body = recorded.body if isinstance(recorded.body, dict) else {}
    return Request(
        turn=recorded.turn,
        model=str(body.get("model", "")),
        status=recorded.status,
        messages=tuple(body.get("messages") or ()),
        prompt_tokens=recorded.prompt_tokens,
        completion_tokens=recorded.completion_tokens,
    )


def tool_from_log(execution: Any) -> ToolRun:
    """A ``bench.engines.kit.runlog.ToolExecution`` as a ``ToolRun``."""
    return ToolRun(
        execution.name,
        dict(execution.args),
        bool(execution.ok),
        execution.error,
        round(execution.duration_ms, 3),
    )
