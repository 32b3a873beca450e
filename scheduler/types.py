"""The scheduler's data types: a leaf module that imports nothing of the loop.

Everything here is plain data (dataclasses, enums, protocols) shared by the behaviour
modules — state, tools, executor, hooks, llm, agent — which import these types and never
each other in a circle::

    types  <-  events, state  <-  tools, hooks  <-  executor, llm  <-  agent  <-  multiagent

The LLM side (``ToolCall``, ``ChatResponse``, the ``ChatModel`` protocol), the run's side
(``AgentStatus``, ``TerminationReason``, ``Usage``, ``StepRecord``, ``RunResult``) and the
tools' side (``ToolResult``, ``Approval``, ``Handoff``, the hook decisions ``Veto`` and
``Rewrite``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scheduler.errors import HookError, SchedulerError, ToolError
    from scheduler.trace import Span, Trace

Message = dict[str, Any]

# -- the LLM's side ----------------------------------------------------------------------


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

    def attributes(self) -> dict[str, Any]:
        """The trace event's attributes."""
        return {
            "attempt": self.attempt,
            "delay_s": self.delay_s,
            "error": self.error,
            "status_code": self.status_code,
        }


OnRetry = Callable[[RetryInfo], None]
OnDelta = Callable[[str], None]


class ChatModel(Protocol):
    """What the agent needs from an LLM client. ``OpenAIChatClient`` implements it.

    ``timeout`` bounds one attempt (a stream's idle gaps), ``deadline`` the whole call.
    A streamed call must not be retried once ``on_delta`` has been called; every failure
    is raised as an ``LLMError``. An ``aclose()`` coroutine, if the model has one, is
    called by ``run_sync()`` and ``LightweightAgent.aclose()``."""

    model: str

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        on_retry: OnRetry | None = None,
    ) -> ChatResponse: ...

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
    ) -> ChatResponse: ...


# -- the run's side ----------------------------------------------------------------------


class AgentStatus(StrEnum):
    IDLE = "idle"
    THINKING = "thinking"
    EXECUTING = "executing"
    WAITING_CONFIRMATION = "waiting_confirmation"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


_S = AgentStatus
TRANSITIONS: dict[AgentStatus, frozenset[AgentStatus]] = {
    _S.IDLE: frozenset({_S.THINKING}),
    _S.THINKING: frozenset({_S.EXECUTING, _S.COMPLETED, _S.FAILED, _S.ABORTED}),
    _S.EXECUTING: frozenset(
        {_S.THINKING, _S.WAITING_CONFIRMATION, _S.COMPLETED, _S.FAILED, _S.ABORTED}
    ),
    _S.WAITING_CONFIRMATION: frozenset({_S.EXECUTING, _S.FAILED, _S.ABORTED}),
    _S.COMPLETED: frozenset(),
    _S.FAILED: frozenset(),
    _S.ABORTED: frozenset(),
}
TERMINAL = frozenset({_S.COMPLETED, _S.FAILED, _S.ABORTED})


class TerminationReason(StrEnum):
    """Why a run ended. Never a sentinel string in the content."""

    STOP = "stop"  # the LLM gave its final answer
    LENGTH = "length"  # ... cut by the model's output limit (finish_reason "length")
    CONTENT_FILTER = "content_filter"  # ... withheld by the provider's filter
    MAX_STEPS = "max_steps"
    TOKEN_BUDGET = "token_budget"
    REPEATED_CALLS = "repeated_calls"
    LLM_ERROR = "llm_error"
    HOOK_ERROR = "hook_error"
    CANCELLED = "cancelled"  # agent.cancel(), RunHandle.cancel() or the task was cancelled
    MAX_DEPTH = "max_depth"  # handoffs / agents-as-tools nested deeper than the request allows
    TIME_LIMIT = "time_limit"  # the request's wall-time budget ran out


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits of one top-level request, shared by every agent it involves: the agent that
    was asked, the agents it hands over to, and the agents it runs as tools (at any depth).
    ``None`` disables a limit. Each agent's own ``AgentConfig`` limits still apply to its
    own part; whichever is hit first stops the whole request, with its reason."""

    max_steps: int | None = 100  # LLM steps of all the request's agents together
    max_total_tokens: int | None = None  # input + output tokens of all of them (server usage)
    timeout_s: float | None = None  # wall time of the whole request
    max_depth: int | None = 8  # agents in a chain of handoffs / agents-as-tools


@dataclass(slots=True)
class Usage:
    """What a run consumed. Token counts are the server's; ``counted_input_tokens`` is ours."""

    requests: int = 0  # LLM calls that returned an answer (retries not included)
    retries: int = 0  # extra HTTP attempts made by the client's retry policy
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0  # tool calls the LLM asked for (executed or not)
    tool_errors: int = 0  # ... of which did not produce a result

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        self.requests += other.requests
        self.retries += other.retries
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.tool_calls += other.tool_calls
        self.tool_errors += other.tool_errors


@dataclass(slots=True)
class StepRecord:
    """One step (one LLM call and the tools it asked for), kept for debugging and replay."""

    number: int
    input_tokens: int | None  # exact count of the request, None when not counted
    response: ChatResponse | None = None
    tool_results: list[ToolResult] = field(default_factory=list)
    duration_s: float = 0.0


@dataclass(slots=True, eq=False)
class RunResult:
    """How a run ended. ``reason`` says why; ``content`` is never a sentinel string."""

    status: AgentStatus
    reason: TerminationReason
    content: str | None  # the final answer (or the summary of an aborted run)
    usage: Usage
    trace: Trace
    messages: list[dict[str, Any]]  # the whole conversation, final answer included
    steps: list[StepRecord]
    detail: str | None = None  # the limit or error message, with its numbers
    error: SchedulerError | None = None
    hook_errors: list[HookError] = field(default_factory=list)
    agent_name: str = ""  # the agent that produced the answer (differs after a handoff)
    handoffs: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    ttft_s: float | None = None  # stream(): run start -> first content delta the consumer saw
    transitions: list[tuple[AgentStatus, AgentStatus]] = field(default_factory=list)
    run_id: str = ""  # the RunHandle's id (also on the root span: ``scheduler.run.id``)

    @property
    def ok(self) -> bool:
        return self.status is AgentStatus.COMPLETED

    @property
    def llm_calls(self) -> int:
        return self.usage.requests

    @property
    def tool_calls(self) -> int:
        return self.usage.tool_calls

    def __repr__(self) -> str:
        return (
            f"RunResult(status={self.status.value}, reason={self.reason.value}, "
            f"llm_calls={self.llm_calls}, tool_calls={self.tool_calls}, content={self.content!r:.60})"
        )


# -- the tools' side ---------------------------------------------------------------------


@dataclass(slots=True)
class Approval:
    """An approver's answer with a reason (a plain bool works too)."""

    approved: bool
    reason: str = ""


Approver = Callable[..., "bool | Approval | Awaitable[bool | Approval]"]


@dataclass(slots=True)
class Handoff:
    """Returned by a handoff tool's handler: pass control of the run to ``agent``."""

    agent: Any  # LightweightAgent (typed loosely: this module imports nothing of the loop)


@dataclass(slots=True, eq=False)
class ToolResult:
    """The outcome of one tool call, in the order the LLM asked for them."""

    call_id: str
    name: str
    arguments: dict[str, Any] | None  # the checked arguments used; None if they never parsed
    content: str  # what the LLM reads in the tool message
    status: str = "ok"  # ok | error | timeout | not_found | invalid_arguments | circuit_open
    #                     | blocked | vetoed | denied | input_error
    error: ToolError | None = None
    value: Any = None  # the handler's return value, before serialisation
    duration_s: float = 0.0
    handoff: Handoff | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.content}


@dataclass(frozen=True, slots=True)
class Veto:
    """Returned by a before_tool hook: do not run the call; the LLM is told ``reason``."""

    reason: str


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Returned by a before_tool hook: run the call with these arguments instead
    (they are validated against the tool's schema again)."""

    arguments: dict[str, Any]


ToolDecision = Veto | Rewrite


# -- the loop's decision: what happens next ---------------------------------------------


@dataclass(slots=True)
class RunAgain:
    """Tool results are in: call the LLM again."""


@dataclass(slots=True)
class Finished:
    content: str | None
    reason: TerminationReason = TerminationReason.STOP


@dataclass(slots=True)
class Aborted:
    reason: TerminationReason
    error: SchedulerError | None = None


@dataclass(slots=True)
class Failed:
    reason: TerminationReason
    error: SchedulerError


@dataclass(slots=True)
class HandedOff:
    agent: Any  # the AgentLoop taking over (typed loosely: this module imports nothing of it)
    span: Span  # the handoff tool call's span: the next agent's trace nests under it


NextStep = RunAgain | Finished | Aborted | Failed | HandedOff
