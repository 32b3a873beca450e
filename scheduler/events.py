"""Events that ``LightweightAgent.stream()`` yields while a run progresses.

The loop only emits these; printing them (or sending them over a websocket) is the
consumer's business — see ``format_event`` for a plain-text rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scheduler.errors import LLMError
    from scheduler.types import AgentStatus, RunResult, StepRecord, ToolResult


@dataclass(slots=True)
class RunStarted:
    agent: str
    at_s: float  # seconds since the run started (0.0 here)
    run_id: str = ""  # the run's handle id (``RunHandle.id``)


@dataclass(slots=True)
class StatusChanged:
    old: AgentStatus
    new: AgentStatus
    at_s: float


@dataclass(slots=True)
class ContentDelta:
    """A piece of the answer as the LLM streams it (time to first token = first one's at_s)."""

    text: str
    step: int
    at_s: float


@dataclass(slots=True)
class StreamInterrupted:
    """The answer being streamed broke after ``delivered_chars`` characters had been sent as
    ContentDelta: what the consumer has is incomplete and will not be continued or replaced
    (never a splice of two answers). The run then fails (RunFinished follows)."""

    step: int
    error: LLMError
    delivered_chars: int
    at_s: float


@dataclass(slots=True)
class ToolCallStarted:
    step: int
    call_id: str
    name: str
    arguments: dict[str, Any] | str
    at_s: float


@dataclass(slots=True)
class ToolCallFinished:
    step: int
    result: ToolResult
    at_s: float


@dataclass(slots=True)
class StepFinished:
    step: StepRecord
    at_s: float


@dataclass(slots=True)
class RunFinished:
    result: RunResult
    at_s: float


AgentEvent = (
    RunStarted
    | StatusChanged
    | ContentDelta
    | StreamInterrupted
    | ToolCallStarted
    | ToolCallFinished
    | StepFinished
    | RunFinished
)


def format_event(event: AgentEvent) -> str:
    """One line of text per event; a console printer is just another consumer."""
    match event:
        case RunStarted(agent=agent):
            return f"[{event.at_s:7.3f}s] run started: {agent}"
        case StatusChanged(old=old, new=new):
            return f"[{event.at_s:7.3f}s] {old.value} -> {new.value}"
        case ContentDelta(text=text):
            return f"[{event.at_s:7.3f}s] delta {text!r}"
        case StreamInterrupted(delivered_chars=chars, error=error):
            return f"[{event.at_s:7.3f}s] stream interrupted after {chars} characters: {error}"
        case ToolCallStarted(name=name, arguments=arguments):
            return f"[{event.at_s:7.3f}s] tool {name} {arguments}"
        case ToolCallFinished(result=result):
            return f"[{event.at_s:7.3f}s] tool {result.name} -> {result.status} ({len(result.content)} chars)"
        case StepFinished(step=step):
            return f"[{event.at_s:7.3f}s] step {step.number} done ({len(step.tool_results)} tool calls)"
        case RunFinished(result=result):
            return f"[{event.at_s:7.3f}s] finished: {result.status.value} ({result.reason.value})"
    raise TypeError(f"not an agent event: {event!r}")
