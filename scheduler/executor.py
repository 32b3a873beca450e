"""Tool execution: checking, hooks, the repeated-call guard, confirmation, the circuit breaker,
timeouts, threads for sync handlers, and parallel calls whose results keep the LLM's order.

A call goes through two phases. *Prepare*, one call after the other (cheap, and the
approver is never asked two questions at once): look the tool up, check the arguments,
``before_tool`` hooks (veto / rewrite), the repeated-call guard, confirmation, the breaker.
*Execute*, concurrently for the calls that got through: run the handler under its timeout.
Every failure becomes a ``ToolResult`` whose content starts with ``Error:`` — the LLM reads
it and the run goes on.

Sync handlers run on daemon worker threads (``ThreadRunner``). Python cannot kill a thread:
when a sync handler overruns its timeout the agent stops waiting and tells the LLM, but the
thread runs on until the function returns. It keeps its worker busy (``stuck`` counts them;
at ``max_workers`` stuck threads new sync calls wait in the queue and time out), and being a
daemon it does not keep the process alive at exit. Async handlers are cancelled for real.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler._timeout import DeadlineExceeded, with_timeout
from scheduler.breaker import CircuitBreaker
from scheduler.errors import (
    CircuitOpen,
    ConfirmationDenied,
    RepeatedToolCall,
    ToolError,
    ToolExecutionError,
    ToolNotFound,
    ToolTimeout,
    ToolVetoed,
)
from scheduler.events import StatusChanged, ToolCallFinished, ToolCallStarted
from scheduler.hooks import Hooks, Rewrite, Veto
from scheduler.state import AgentStatus
from scheduler.tools import NO_TIMEOUT, ToolContext, ToolSpec, to_content
from scheduler.trace import TOOL, Span

if TYPE_CHECKING:
    from scheduler.models import ToolCall
    from scheduler.state import RunState


@dataclass(slots=True)
class Approval:
    """An approver's answer with a reason (a plain bool works too)."""

    approved: bool
    reason: str = ""


Approver = Callable[..., "bool | Approval | Awaitable[bool | Approval]"]


@dataclass(slots=True)
class Handoff:
    """Returned by a handoff tool's handler: pass control of the run to ``agent``."""

    agent: Any  # LightweightAgent (typed loosely to keep imports one-way)


@dataclass(slots=True, eq=False)
class ToolResult:
    """The outcome of one tool call, in the order the LLM asked for them."""

    call_id: str
    name: str
    arguments: dict[str, Any] | None  # the checked arguments used; None if they never parsed
    content: str  # what the LLM reads in the tool message
    status: str = "ok"  # ok | error | timeout | not_found | invalid_arguments | circuit_open
    #                     | blocked | vetoed | denied
    error: ToolError | None = None
    value: Any = None  # the handler's return value, before serialisation
    duration_s: float = 0.0
    handoff: Handoff | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.content}


class ThreadRunner:
    """Daemon worker threads for sync handlers (threads are reused, grown on demand)."""

    def __init__(self, max_workers: int = 32):
        self.max_workers = max_workers
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self.abandoned = 0  # calls given up on (timeout, cancellation)
        self.abandoned_returned = 0  # ... whose thread has since returned

    @property
    def stuck(self) -> int:
        """Threads still running a call nobody waits for any more."""
        return self.abandoned - self.abandoned_returned

    def submit(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._jobs.put((fn, kwargs, loop, future))
        with self._lock:
            if self._idle > 0:
                self._idle -= 1  # an idle worker will take it
            elif self._threads < self.max_workers:
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"scheduler-tool-{self._threads}", daemon=True
                ).start()
            # else: every worker is busy (or stuck); the job waits in the queue
        return future

    def _work(self) -> None:
        while True:
            fn, kwargs, loop, future = self._jobs.get()
            try:
                outcome = (True, fn(**kwargs))
            except BaseException as exc:  # handed to the waiting coroutine
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting
                loop.call_soon_threadsafe(self._resolve, future, outcome)
            with self._lock:
                self._idle += 1

    def _resolve(self, future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
        if future.cancelled():
            self.abandoned_returned += 1
        elif outcome[0]:
            future.set_result(outcome[1])
        else:
            future.set_exception(outcome[1])


@dataclass(slots=True, eq=False)
class _Ready:
    spec: ToolSpec
    call: ToolCall
    args: dict[str, Any]
    span: Span
    result: ToolResult | None = None
    started: float = field(default=0.0)


_KEY_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def _key(args: dict[str, Any]) -> str:
    """Canonical text of arguments: equal arguments in any key order give the same key."""
    return _KEY_ENCODER.encode(args)


async def _wait(future: asyncio.Future[Any]) -> Any:
    return await future


class ToolExecutor:
    """Runs the tool calls of one LLM answer for an agent (tools, breakers and threads are
    the agent's, shared by its runs)."""

    def __init__(
        self,
        tools: dict[str, ToolSpec],
        hooks: Hooks,
        *,
        tool_timeout: float | None,
        max_same_tool_calls: int | None,
        parallel: bool,
        breaker_threshold: int | None,
        breaker_cooldown_s: float,
        clock: Callable[[], float] = time.monotonic,
        approver: Approver | None = None,
        threads: ThreadRunner | None = None,
    ):
        self.tools = tools
        self.hooks = hooks
        self.tool_timeout = tool_timeout
        self.max_same_tool_calls = max_same_tool_calls
        self.parallel = parallel
        self.breaker_threshold = breaker_threshold
        self.breaker_cooldown_s = breaker_cooldown_s
        self.clock = clock
        self.approver = approver
        self.threads = threads or ThreadRunner()
        self.breakers: dict[str, CircuitBreaker] = {}

    def breaker(self, name: str) -> CircuitBreaker | None:
        """The tool's circuit breaker (created on first use), None when breakers are off."""
        if self.breaker_threshold is None:
            return None
        breaker = self.breakers.get(name)
        if breaker is None:
            breaker = self.breakers[name] = CircuitBreaker(
                self.breaker_threshold, self.breaker_cooldown_s, clock=self.clock
            )
        return breaker

    async def run(self, state: RunState, calls: list[ToolCall], parent: Span) -> list[ToolResult]:
        """Execute ``calls``; the results come back in the same order."""
        prepared = [await self._prepare(state, call, parent) for call in calls]
        ready = [p for p in prepared if type(p) is _Ready]
        if len(ready) == 1 or (ready and not self.parallel):
            for item in ready:
                await self._execute(state, item)
        elif ready:
            await asyncio.gather(*(self._execute(state, item) for item in ready))
        return [p.result if type(p) is _Ready else p for p in prepared]  # type: ignore[misc]

    async def _prepare(self, state: RunState, call: ToolCall, parent: Span) -> _Ready | ToolResult:
        span = state.trace.start(
            f"execute_tool {call.name}",
            TOOL,
            parent,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.call.arguments": call.arguments,
            },
        )
        state.usage.tool_calls += 1
        started = time.perf_counter()
        spec = self.tools.get(call.name)
        args: dict[str, Any] | None = None
        try:
            if spec is None:
                raise ToolNotFound(call.name, sorted(self.tools))
            args = spec.check_arguments(call.arguments)
            if self.hooks.before_tool:
                decision = await self.hooks.fire(
                    "before_tool", state, span, call=call, arguments=args
                )
                if isinstance(decision, Veto):
                    raise ToolVetoed(call.name, decision.reason)
                if isinstance(decision, Rewrite):
                    args = spec.check_arguments(decision.arguments)
                    span.attributes["scheduler.tool.rewritten"] = True
            span.attributes["scheduler.tool.args"] = args
            if state.emit is not None:
                state.emit(
                    ToolCallStarted(
                        state.step, call.id, call.name, args, time.perf_counter() - state.started
                    )
                )
            if self.max_same_tool_calls is not None:
                key = (call.name, _key(args))
                count = state.call_counts.get(key, 0)
                if count >= self.max_same_tool_calls:
                    state.blocked_calls += 1
                    raise RepeatedToolCall(call.name, count, self.max_same_tool_calls)
                state.call_counts[key] = count + 1
            if spec.require_confirmation:
                await self._confirm(state, call, args, span)
            breaker = self.breaker(call.name)
            if breaker is not None and not breaker.allow():
                raise CircuitOpen(call.name, breaker.failures, breaker.retry_in())
        except ToolError as error:
            return await self._finish(state, call, span, args, started, None, error)
        return _Ready(spec, call, args, span, None, started)

    async def _confirm(
        self, state: RunState, call: ToolCall, args: dict[str, Any], span: Span
    ) -> None:
        self._move(state, AgentStatus.WAITING_CONFIRMATION)
        try:
            if self.approver is None:
                answer: Any = Approval(
                    False, "no approver is configured for tools that need confirmation"
                )
            else:
                try:
                    answer = self.approver(call=call, arguments=args, state=state)
                    if inspect.isawaitable(answer):
                        answer = await answer
                except Exception as exc:  # a broken approver must not approve
                    answer = Approval(False, f"the approver failed: {type(exc).__name__}: {exc}")
        finally:
            self._move(state, AgentStatus.EXECUTING)
        approval = answer if isinstance(answer, Approval) else Approval(bool(answer), "")
        state.trace.event(
            span, "confirmation", {"approved": approval.approved, "reason": approval.reason}
        )
        if not approval.approved:
            raise ConfirmationDenied(call.name, approval.reason or "denied")

    def _move(self, state: RunState, target: AgentStatus) -> None:
        old = state.status
        state.transition(target)
        if state.emit is not None:
            state.emit(StatusChanged(old, target, time.perf_counter() - state.started))

    async def _execute(self, state: RunState, item: _Ready) -> None:
        spec, call = item.spec, item.call
        timeout = spec.timeout if spec.timeout is not None else self.tool_timeout
        if timeout == NO_TIMEOUT:
            timeout = None
        kwargs = item.args
        if spec.context_param is not None:
            kwargs = {**kwargs, spec.context_param: ToolContext(state, call, item.span)}
        breaker = self.breaker(call.name)
        try:
            if spec.is_async:
                value = await with_timeout(spec.handler(**kwargs), timeout)
            elif spec.run_in_thread:
                future = self.threads.submit(spec.handler, kwargs)
                try:
                    value = await with_timeout(_wait(future), timeout)
                except BaseException:
                    if future.cancelled():
                        self.threads.abandoned += 1
                    raise
            else:
                value = spec.handler(**kwargs)
                if inspect.isawaitable(value):
                    value = await with_timeout(value, timeout)
        except Exception as exc:
            if breaker is not None:
                breaker.record_failure()
            timed_out = isinstance(exc, DeadlineExceeded) and timeout is not None
            error = (
                ToolTimeout(call.name, timeout) if timed_out else ToolExecutionError(call.name, exc)
            )
            item.result = await self._finish(
                state, call, item.span, item.args, item.started, None, error
            )
            return
        if breaker is not None:
            breaker.record_success()
        item.result = await self._finish(
            state, call, item.span, item.args, item.started, value, None
        )

    async def _finish(
        self,
        state: RunState,
        call: ToolCall,
        span: Span,
        args: dict[str, Any] | None,
        started: float,
        value: Any,
        error: ToolError | None,
    ) -> ToolResult:
        if error is None:
            if type(value) is Handoff:
                result = ToolResult(
                    call.id,
                    call.name,
                    args,
                    f"Transferred to {value.agent.name}.",
                    value=value,
                    handoff=value,
                )
            else:
                result = ToolResult(call.id, call.name, args, to_content(value), value=value)
        else:
            state.usage.tool_errors += 1
            result = ToolResult(call.id, call.name, args, f"Error: {error}", error.status, error)
            span.attributes["error.type"] = type(error).__name__
            if self.hooks.on_error:
                await self.hooks.fire("on_error", state, span, error=error)
        if self.hooks.after_tool:
            replaced = await self.hooks.fire("after_tool", state, span, result=result)
            if isinstance(replaced, str):
                result.content = replaced
        result.duration_s = time.perf_counter() - started
        span.attributes["gen_ai.tool.call.result"] = result.content
        span.attributes["scheduler.tool.status"] = result.status
        state.trace.end(span, error)
        if state.emit is not None:
            state.emit(ToolCallFinished(state.step, result, time.perf_counter() - state.started))
        return result
