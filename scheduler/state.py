"""The state machine, the loop's state (one dataclass that guards its budgets) and results.

Statuses and the transitions the loop may take — anything else raises InvalidTransition::

    IDLE ──────────────────> THINKING                 run() starts
    THINKING ──────────────> EXECUTING                the LLM asked for tools
    THINKING ──────────────> COMPLETED                a final answer
    THINKING ──────────────> FAILED | ABORTED         LLM error | budget, cancel
    EXECUTING ─────────────> THINKING                 tool results appended, next step
    EXECUTING ─────────────> WAITING_CONFIRMATION     a tool needs the approver's yes
    WAITING_CONFIRMATION ──> EXECUTING                answered (yes runs it, no tells the LLM)
    EXECUTING | WAITING_CONFIRMATION ──> FAILED | ABORTED
    EXECUTING ─────────────> COMPLETED                handed off, the other agent completed

COMPLETED, FAILED and ABORTED are terminal: a new run() starts from a new state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from scheduler.errors import (
    HookError,
    InvalidTransition,
    MaxStepsExceeded,
    SchedulerError,
    TokenBudgetExceeded,
    TotalTokensExceeded,
)

if TYPE_CHECKING:
    from scheduler.events import AgentEvent
    from scheduler.executor import ToolResult
    from scheduler.models import ChatResponse
    from scheduler.trace import Span, Trace


class AgentStatus(StrEnum):
    IDLE = "idle"
    THINKING = "thinking"
    EXECUTING = "executing"
    WAITING_CONFIRMATION = "waiting_confirmation"
    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"


S = AgentStatus
TRANSITIONS: dict[AgentStatus, frozenset[AgentStatus]] = {
    S.IDLE: frozenset({S.THINKING}),
    S.THINKING: frozenset({S.EXECUTING, S.COMPLETED, S.FAILED, S.ABORTED}),
    S.EXECUTING: frozenset({S.THINKING, S.WAITING_CONFIRMATION, S.COMPLETED, S.FAILED, S.ABORTED}),
    S.WAITING_CONFIRMATION: frozenset({S.EXECUTING, S.FAILED, S.ABORTED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.ABORTED: frozenset(),
}
TERMINAL = frozenset({S.COMPLETED, S.FAILED, S.ABORTED})


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
    CANCELLED = "cancelled"


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


TokenCounter = Callable[[dict[str, Any]], int]


@dataclass(slots=True, eq=False)
class RunState:
    """Everything one run knows; hooks and tools receive it. Guards its own budgets."""

    agent_name: str  # the agent running (changes on a handoff only in the new state)
    messages: list[dict[str, Any]]  # the conversation sent to the LLM, appended in place
    trace: Trace  # spans of this run
    context: Any = None  # the ``context=`` object given to run(), for hooks and tools
    max_steps: int | None = None  # budget: LLM steps (None: unlimited)
    token_budget: int | None = None  # budget: input tokens of any one request
    max_total_tokens: int | None = None  # budget: input + output tokens over the run
    max_blocked_calls: int | None = None  # budget: repeated calls refused before aborting
    status: AgentStatus = AgentStatus.IDLE
    step: int = 0  # steps started
    usage: Usage = field(default_factory=Usage)
    steps: list[StepRecord] = field(default_factory=list)
    call_counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (tool, args) -> runs
    blocked_calls: int = 0  # repeated calls refused so far
    hook_errors: list[HookError] = field(default_factory=list)
    transitions: list[tuple[AgentStatus, AgentStatus]] = field(default_factory=list)
    span: Span | None = None  # the run's root span
    emit: Callable[[AgentEvent], None] | None = None  # set by stream(): where events go
    count_tokens: TokenCounter | None = None  # exact per-message counter, None: server usage
    tools_tokens: int = 0  # tokens of the tool schemas sent with each request
    started: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None  # streaming: first delta of the run
    cancel_requested: bool = False
    handoffs: list[str] = field(default_factory=list)  # agents control passed through
    memory_from: int = 0  # index of this run's first new message (what memory keeps)
    _counted: int = 0  # messages already counted (each message is counted once)
    _message_tokens: int = 0  # their tokens

    def transition(self, target: AgentStatus) -> None:
        """Move to ``target`` or raise InvalidTransition."""
        allowed = TRANSITIONS[self.status]
        if target not in allowed:
            raise InvalidTransition(self.status.value, target.value, {s.value for s in allowed})
        self.transitions.append((self.status, target))
        self.status = target

    def consume_step(self) -> int:
        """Start a step; raises MaxStepsExceeded when the budget is spent."""
        if self.max_steps is not None and self.step >= self.max_steps:
            raise MaxStepsExceeded(self.max_steps)
        self.step += 1
        return self.step

    def input_tokens(self) -> int | None:
        """Exact input tokens of the next request (messages + tool schemas + reply priming),
        counting only the messages added since the last call. None when not counting."""
        count = self.count_tokens
        if count is None:
            return None
        messages = self.messages
        if len(messages) < self._counted:  # the list was cut (memory trim): recount
            self._counted = self._message_tokens = 0
        total = self._message_tokens
        for i in range(self._counted, len(messages)):
            total += count(messages[i])
        self._counted, self._message_tokens = len(messages), total
        return total + self.tools_tokens + 3  # + reply priming (OpenAI cookbook)

    def check_request(self) -> int | None:
        """Before a request: the exact input size against ``token_budget``."""
        tokens = self.input_tokens()
        if tokens is not None and self.token_budget is not None and tokens > self.token_budget:
            raise TokenBudgetExceeded(self.token_budget, tokens)
        return tokens

    def record_response(self, response: ChatResponse) -> None:
        """After a response: add the server's usage and check the token budgets."""
        usage = self.usage
        usage.requests += 1
        usage.retries += response.attempts - 1
        reported = response.usage
        if reported is not None:
            usage.input_tokens += reported.prompt_tokens
            usage.output_tokens += reported.completion_tokens
            # no local tokenizer: the server's count of this request is the best we have
            budget = self.token_budget
            if self.count_tokens is None and budget is not None and reported.prompt_tokens > budget:
                raise TokenBudgetExceeded(budget, reported.prompt_tokens, counted="server-reported")
        if self.max_total_tokens is not None and usage.total_tokens > self.max_total_tokens:
            raise TotalTokensExceeded(self.max_total_tokens, usage.total_tokens)


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
    ttft_s: float | None = None  # streaming: run start -> first content delta the user sees
    transitions: list[tuple[AgentStatus, AgentStatus]] = field(default_factory=list)

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
