"""Tool execution: checking, hooks, the repeated-call guard, confirmation, the circuit breaker,
timeouts, threads for sync handlers, and parallel calls whose results keep the LLM's order.

A call goes through two phases. *Prepare*, one call after the other (cheap, and the
approver is never asked two questions at once): look the tool up, check the arguments,
``before_tool`` hooks (veto / rewrite), the repeated-call guard, confirmation. *Execute*,
concurrently for the calls that got through: the breaker, then the handler under its
timeout. Every failure becomes a ``ToolResult`` whose content starts with ``Error:`` — the
LLM reads it and the run goes on.

Breakers count *dependency* failures only: exceptions and timeouts. A ``ToolInputError``
(the caller's mistake), a cancelled call and a call stopped by its own request's budget (an
agent run as a tool, out of the caller's steps) count for nothing, and a half-open trial that
ends either way lets the next trial through. Whatever a handler raises — ``SystemExit``,
``KeyboardInterrupt``, ``GeneratorExit`` or any ``BaseException``, in a thread or not — is that
call's failure, never the service's; only the cancellation of the run itself propagates (and
wins over whatever the tool turned it into). What the LLM reads of an exception is its type
(``tool 'x' failed: KeyError``) unless the tool sets ``expose_errors``; the full text stays
on the result and in the trace.

Sync handlers run on the shared worker threads of ``scheduler.pool`` (see there for what a
hung thread means and for the per-tool bulkhead). Async handlers are cancelled for real.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable
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
    ToolInputError,
    ToolNotFound,
    ToolTimeout,
    ToolVetoed,
    safe_str,
)
from scheduler.events import StatusChanged, ToolCallFinished, ToolCallStarted
from scheduler.hooks import Hooks
from scheduler.pool import ToolRaised, ToolThreadPool, default_pool
from scheduler.tools import NO_TIMEOUT, ToolContext, ToolSpec, to_content
from scheduler.trace import TOOL, Span
from scheduler.types import (
    AgentStatus,
    Approval,
    Approver,
    Handoff,
    Rewrite,
    ToolCall,
    ToolResult,
    Veto,
)

if TYPE_CHECKING:
    from scheduler.state import RunState

__all__ = ["Approval", "Approver", "Handoff", "ToolExecutor", "ToolResult"]


@dataclass(slots=True, eq=False)
class _Ready:
    spec: ToolSpec | None  # None: the LLM named an unknown tool (then never executed)
    call: ToolCall
    args: dict[str, Any] | None  # None: the arguments never parsed
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


def _cancelling() -> bool:
    """Is the current task being cancelled (as opposed to a tool raising CancelledError)?"""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


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
        threads: ToolThreadPool | None = None,
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
        self.threads = threads or default_pool()
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
        except ToolError as error:
            failed = _Ready(spec, call, args, span, None, started)
            return await self._finish(state, failed, None, error)
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
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:  # a broken approver must not approve
                    answer = Approval(
                        False, f"the approver failed: {type(exc).__name__}: {safe_str(exc)}"
                    )
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
        assert spec is not None and item.args is not None  # only prepared calls get here
        breaker = self.breaker(call.name)
        if breaker is not None and not breaker.allow():
            error: ToolError = CircuitOpen(call.name, breaker.failures, breaker.retry_in())
            item.result = await self._finish(state, item, None, error)
            return
        timeout = spec.timeout if spec.timeout is not None else self.tool_timeout
        if timeout == NO_TIMEOUT:
            timeout = None
        kwargs = item.args
        if spec.context_param is not None:
            kwargs = {**kwargs, spec.context_param: ToolContext(state, call, item.span)}
        try:
            if spec.is_async:
                value = await with_timeout(spec.handler(**kwargs), timeout)
            else:
                value = await self._call_sync(spec, kwargs, timeout)
        except ToolInputError as exc:  # the caller's mistake: not the dependency's
            if breaker is not None:
                breaker.release()
            exc.tool_name = call.name
            error = exc
        except BaseException as exc:  # whatever the handler raised: SystemExit included
            if _cancelling():  # the run is being cancelled: that wins over what the tool did
                if breaker is not None:
                    breaker.release()
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise asyncio.CancelledError() from exc
            error = self._failure(state, call.name, exc, timeout, breaker)
        else:
            if breaker is not None:
                breaker.record_success()
            item.result = await self._finish(state, item, value, None)
            return
        item.result = await self._finish(state, item, None, error)

    @staticmethod
    def _failure(
        state: RunState,
        name: str,
        exc: BaseException,
        timeout: float | None,
        breaker: CircuitBreaker | None,
    ) -> ToolError:
        """The tool error for what a handler raised, and what it tells the breaker: a failure
        of the dependency, or nothing (a CancelledError of its own, or its request's budget
        running out inside it — an agent run as a tool, stopped by the caller's budget)."""
        if isinstance(exc, ToolRaised):  # a sync handler's BaseException, from its thread
            exc = exc.cause
        scope = state.scope
        dependency_failed = not isinstance(exc, asyncio.CancelledError) and (
            scope is None or exc is not scope.exhausted
        )
        if breaker is not None:
            if dependency_failed:
                breaker.record_failure()
            else:
                breaker.release()
        if isinstance(exc, DeadlineExceeded) and timeout is not None:
            return ToolTimeout(name, timeout)
        return ToolExecutionError(name, exc)

    async def _call_sync(
        self, spec: ToolSpec, kwargs: dict[str, Any], timeout: float | None
    ) -> Any:
        """A sync handler's value: from a worker thread, or inline (``run_in_thread=False``)."""
        if not spec.run_in_thread:
            value = spec.handler(**kwargs)
            if inspect.iscoroutine(value):
                return await with_timeout(value, timeout)
            return await value if inspect.isawaitable(value) else value
        job = self.threads.submit(spec.handler, kwargs, spec, spec.max_concurrency)
        try:
            return await with_timeout(_wait(job.future), timeout)
        except BaseException:
            self.threads.abandon(job)
            raise

    async def _finish(
        self, state: RunState, item: _Ready, value: Any, error: ToolError | None
    ) -> ToolResult:
        call, span, args = item.call, item.span, item.args
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
            expose = item.spec is not None and item.spec.expose_errors
            result = ToolResult(
                call.id, call.name, args, f"Error: {error.for_llm(expose)}", error.status, error
            )
            span.attributes["error.type"] = type(error).__name__
            if self.hooks.on_error:
                await self.hooks.fire("on_error", state, span, error=error)
        if self.hooks.after_tool:
            replaced = await self.hooks.fire("after_tool", state, span, result=result)
            if isinstance(replaced, str):
                result.content = replaced
        result.duration_s = time.perf_counter() - item.started
        span.attributes["gen_ai.tool.call.result"] = result.content
        span.attributes["scheduler.tool.status"] = result.status
        state.trace.end(span, error)
        if state.emit is not None:
            state.emit(ToolCallFinished(state.step, result, time.perf_counter() - state.started))
        return result
