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

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.errors import (
    HookError,
    InvalidTransition,
    LimitExceeded,
    MaxDepthExceeded,
    MaxStepsExceeded,
    RequestStepsExceeded,
    RequestTimeExceeded,
    RequestTokensExceeded,
    TokenBudgetExceeded,
    TotalTokensExceeded,
)
from scheduler.tokens import REPLY_PRIMING, byte_bound, char_floor, is_large
from scheduler.types import (
    TERMINAL,
    TRANSITIONS,
    AgentStatus,
    Budget,
    ChatResponse,
    RunResult,
    StepRecord,
    TerminationReason,
    Usage,
)

if TYPE_CHECKING:
    from scheduler.events import AgentEvent
    from scheduler.tokens import AgentCounter
    from scheduler.trace import Span, Trace

__all__ = [
    "TERMINAL",
    "TRANSITIONS",
    "AgentStatus",
    "RequestScope",
    "RunHandle",
    "RunResult",
    "RunState",
    "StepRecord",
    "TerminationReason",
    "Usage",
]


class RunHandle:
    """One run of an agent, for whoever serves it: ``id``, ``status``, ``cancel()``, and the
    ``result`` once it ended. Pass one to ``run()`` / ``stream()`` (or let them make one);
    an agent serving many requests at once is then steered run by run::

        handle = RunHandle(request_id)
        result = await agent.run(question, handle=handle)   # elsewhere: handle.cancel()
    """

    __slots__ = ("_cancel_reason", "agents", "id", "result", "state", "task")

    def __init__(self, run_id: str | None = None):
        self.id = run_id or os.urandom(8).hex()
        self.state: RunState | None = None  # while the run goes on (dropped at its end)
        self.task: asyncio.Task[Any] | None = None  # ditto
        self.result: RunResult | None = None
        self.agents: tuple[Any, ...] = ()  # at the end: every agent that took part
        self._cancel_reason = TerminationReason.CANCELLED

    def __repr__(self) -> str:
        return f"RunHandle(id={self.id!r}, status={self.status.value})"

    @property
    def status(self) -> AgentStatus:
        if self.result is not None:
            return self.result.status
        return AgentStatus.IDLE if self.state is None else self.state.status

    def finish(self, scope: RequestScope) -> None:
        """The run is over: keep its result, drop the live state (no reference cycle keeps
        a finished run's messages and trace alive for the garbage collector to find)."""
        self.agents = tuple(scope.agents)
        self.state = self.task = None

    @property
    def done(self) -> bool:
        return self.result is not None

    def cancel(self, reason: TerminationReason = TerminationReason.CANCELLED) -> bool:
        """End the run ABORTED with ``reason`` (a normal RunResult, not an exception).
        False if it already ended or has not started."""
        state = self.state
        if state is None or state.status in TERMINAL:
            return False
        self._cancel_reason = reason
        state.cancel_requested = True
        if self.task is not None:
            self.task.cancel()
        return True

    @property
    def cancel_reason(self) -> TerminationReason:
        return self._cancel_reason


@dataclass(slots=True, eq=False)
class RequestScope:
    """What one top-level request has spent, shared by all its agents' runs (handoffs and
    agents-as-tools). Guards the request's ``Budget``; a limit hit anywhere is kept in
    ``exhausted`` so that every run of the request stops at its next check."""

    budget: Budget
    handle: RunHandle  # the top-level run's
    steps: int = 0
    tokens: int = 0
    started: float = field(default_factory=time.perf_counter)
    exhausted: LimitExceeded | None = None
    agents: list[Any] = field(default_factory=list)  # every agent that ran in the request
    _timer: asyncio.TimerHandle | None = None

    def fail(self, error: LimitExceeded) -> LimitExceeded:
        if self.exhausted is None:
            self.exhausted = error
        return self.exhausted

    def arm_timer(self) -> None:
        """Cancel the request when its wall-time budget runs out (no timer if none)."""
        timeout = self.budget.timeout_s
        if timeout is not None:
            self._timer = asyncio.get_running_loop().call_later(timeout, self._expire)

    def disarm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        timeout = self.budget.timeout_s
        assert timeout is not None
        self.fail(RequestTimeExceeded(timeout))
        self.handle.cancel(TerminationReason.TIME_LIMIT)

    def enter(self, depth: int) -> None:
        """A run starts ``depth`` agents deep (1: the top-level run)."""
        limit = self.budget.max_depth
        if limit is not None and depth > limit:
            raise self.fail(MaxDepthExceeded(limit, depth))

    def consume_step(self) -> None:
        if self.exhausted is not None:
            raise self.exhausted
        limit = self.budget.max_steps
        if limit is not None and self.steps >= limit:
            raise self.fail(RequestStepsExceeded(limit))
        self.steps += 1

    def add_tokens(self, tokens: int) -> None:
        self.tokens += tokens
        limit = self.budget.max_total_tokens
        if limit is not None and self.tokens > limit:
            raise self.fail(RequestTokensExceeded(limit, self.tokens))


@dataclass(slots=True)
class _Tally:
    """A per-message measure summed over a conversation, adding only the new messages."""

    measure: Callable[[dict[str, Any]], int]
    done: int = 0  # messages measured
    total: int = 0

    def update(self, messages: list[dict[str, Any]]) -> int:
        if len(messages) < self.done:  # the list was cut (memory trim): start again
            self.done = self.total = 0
        for i in range(self.done, len(messages)):
            self.total += self.measure(messages[i])
        self.done = len(messages)
        return self.total


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
    counter: AgentCounter | None = None  # exact counts (None: the server's usage only)
    scope: RequestScope | None = None  # the request this run is part of (its shared budget)
    depth: int = 1  # agents deep in the request (handoffs and agents-as-tools add one)
    run_id: str = ""  # the request's RunHandle id
    streaming: bool = False  # LLM calls are streamed
    started: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None  # streaming: first delta of the run
    cancel_requested: bool = False
    handoffs: list[str] = field(default_factory=list)  # agents control passed through
    memory_from: int = 0  # index of this run's first new message (what memory keeps)
    exact_tokens: bool = True  # count every request (False: only when the bound may not fit)
    _counted: int = 0  # messages already counted (each message is counted once)
    _message_tokens: int = 0  # their tokens
    _floor: _Tally = field(default_factory=lambda: _Tally(char_floor))  # messages' lower bound
    _bound: _Tally = field(default_factory=lambda: _Tally(byte_bound))  # ... and upper bound

    def transition(self, target: AgentStatus) -> None:
        """Move to ``target`` or raise InvalidTransition."""
        allowed = TRANSITIONS[self.status]
        if target not in allowed:
            raise InvalidTransition(self.status.value, target.value, {s.value for s in allowed})
        self.transitions.append((self.status, target))
        self.status = target

    def consume_step(self) -> int:
        """Start a step; raises MaxStepsExceeded (this agent's limit) or a
        RequestBudgetExceeded (the request's) when a budget is spent."""
        if self.max_steps is not None and self.step >= self.max_steps:
            raise MaxStepsExceeded(self.max_steps)
        if self.scope is not None:
            self.scope.consume_step()
        self.step += 1
        return self.step

    async def input_tokens(self, limit: int | None = None) -> int | None:
        """Exact input tokens of the next request (messages + tool schemas + reply priming),
        counting only the messages added since the last call (large ones off the event
        loop). None when not counting. With ``limit``, a large message stops being counted
        once the total passes it: TokenBudgetExceeded, with the count so far (a lower bound)."""
        counter = self.counter
        if counter is None:
            return None
        messages = self.messages
        if len(messages) < self._counted:  # the list was cut (memory trim): recount
            self._counted = self._message_tokens = 0
        fixed = counter.tools_tokens + REPLY_PRIMING
        total = self._message_tokens
        for i in range(self._counted, len(messages)):
            message = messages[i]
            if is_large(message):
                room = None if limit is None else limit - fixed - total
                tokens, complete = await counter.amessage(message, room)
                total += tokens
                if not complete:
                    assert limit is not None  # only a limit stops a count the run still awaits
                    raise TokenBudgetExceeded(limit, total + fixed, counted="lower bound")
            else:
                total += counter.message(message)
            self._counted, self._message_tokens = i + 1, total
        return total + fixed

    async def check_request(self) -> int | None:
        """Before a request: its input size against ``token_budget``. Returns the exact
        count, or None when not counted. A request whose lower bound (its length: no token
        is longer than 128 characters) is over the budget is refused without tokenizing;
        with ``exact_tokens`` off, one whose upper bound (its UTF-8 size) fits is let through
        without tokenizing."""
        budget, counter = self.token_budget, self.counter
        if counter is None:
            return None
        if budget is not None:
            fixed = counter.tools_tokens + REPLY_PRIMING
            floor = self._floor.update(self.messages) + fixed
            if floor > budget:
                raise TokenBudgetExceeded(budget, floor, counted="lower bound")
            if not self.exact_tokens and self._bound.update(self.messages) + fixed <= budget:
                return None  # certainly within the budget
        tokens = await self.input_tokens(budget)
        if tokens is not None and budget is not None and tokens > budget:
            raise TokenBudgetExceeded(budget, tokens)
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
            if self.counter is None and budget is not None and reported.prompt_tokens > budget:
                raise TokenBudgetExceeded(budget, reported.prompt_tokens, counted="server-reported")
            if self.scope is not None:
                self.scope.add_tokens(reported.total_tokens)
        if self.max_total_tokens is not None and usage.total_tokens > self.max_total_tokens:
            raise TotalTokensExceeded(self.max_total_tokens, usage.total_tokens)
