"""LightweightAgent: the tool-calling loop.

``run()`` is one loop over ``_run_step()``, which returns what to do next as a small typed
union (``RunAgain | Finished | Aborted | Failed | HandedOff``) dispatched with ``match``.
All run state lives in ``RunState`` (state.py), which guards its own budgets; tool
execution lives in executor.py, the HTTP client in llm.py. The loop prints nothing: it
records spans (trace.py) and emits events (events.py) for whoever wants to show them.

One agent serves many requests at once: each run has its own ``RunState`` and ``RunHandle``
(id, status, cancel); the agent keeps only configuration, tools, hooks and breakers. A run
and every run it starts (handoffs, agents run as tools) share one ``RequestScope``: the
request's ``Budget`` of steps, tokens, wall time and depth.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any, assert_never

from scheduler.config import AgentConfig
from scheduler.errors import (
    ConfigError,
    HookError,
    LimitExceeded,
    LLMError,
    LLMStreamInterrupted,
    RepeatedCallsExceeded,
    RequestBudgetExceeded,
    SchedulerError,
    safe_str,
)
from scheduler.events import (
    AgentEvent,
    ContentDelta,
    RunFinished,
    RunStarted,
    StatusChanged,
    StepFinished,
    StreamInterrupted,
)
from scheduler.executor import ToolExecutor
from scheduler.hooks import HookRegistry, Hooks
from scheduler.memory import ConversationMemory
from scheduler.multiagent import agent_as_tool, handoff
from scheduler.pool import ToolThreadPool
from scheduler.state import RequestScope, RunHandle, RunState
from scheduler.tokens import AgentCounter
from scheduler.tools import ToolSpec, tool
from scheduler.trace import AGENT, LLM, STEP, Span, Trace, flow, preview
from scheduler.types import (
    AgentStatus,
    Approver,
    Budget,
    ChatModel,
    ChatResponse,
    RetryInfo,
    RunResult,
    StepRecord,
    TerminationReason,
    ToolResult,
)

# -- what happens next -------------------------------------------------------------------


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
    agent: LightweightAgent
    span: Span  # the handoff tool call's span: the next agent's trace nests under it


NextStep = RunAgain | Finished | Aborted | Failed | HandedOff

SUMMARY_PROMPT = (
    "You have run out of steps. Do not call any tool. Tell the user briefly what you found "
    "so far and what is still missing."
)
_FINISH_REASONS = {
    "length": TerminationReason.LENGTH,
    "content_filter": TerminationReason.CONTENT_FILTER,
}


class LightweightAgent(HookRegistry):
    """An async tool-calling agent: ``await agent.run("question")`` -> RunResult.
    ``agent.on(event, hook)`` registers a hook (typed per event, see hooks.py)."""

    def __init__(
        self,
        llm: ChatModel,
        config: AgentConfig | None = None,
        *,
        tools: Iterable[ToolSpec | Callable[..., Any]] = (),
        approver: Approver | None = None,
        memory: ConversationMemory | None = None,
        threads: ToolThreadPool | None = None,
    ):
        self.llm = llm
        self.config = config = config or AgentConfig()
        self.name = config.name
        self.hooks = Hooks(raise_errors=config.raise_hook_errors)
        self.tools: dict[str, ToolSpec] = {}
        self.executor = ToolExecutor(
            self.tools,
            self.hooks,
            tool_timeout=config.tool_timeout,
            max_same_tool_calls=config.max_same_tool_calls,
            parallel=config.parallel_tool_calls,
            breaker_threshold=config.breaker_threshold,
            breaker_cooldown_s=config.breaker_cooldown_s,
            clock=config.clock,
            approver=approver,
            threads=threads,  # None: the process-wide pool shared by all agents
        )
        self._params = config.request_params()
        self._model = config.model or getattr(llm, "model", "unknown")
        self._schemas: list[dict[str, Any]] | None = None
        self._counter: AgentCounter | bool | None = False  # False: not built yet
        self._active: dict[RunHandle, None] = {}  # top-level runs in progress (ordered)
        self._last: RunState | None = None
        if memory is None and config.memory:
            limit = config.memory_max_tokens or (
                config.token_budget // 2 if config.token_budget else None
            )
            memory = ConversationMemory(limit)
        self.memory = memory
        self.register_tools(tools)

    def __repr__(self) -> str:
        return (
            f"LightweightAgent(name={self.name!r}, model={self._model!r}, tools={list(self.tools)})"
        )

    # -- configuration (chainable) -----------------------------------------------------

    def register_tool(self, spec: ToolSpec | Callable[..., Any]) -> LightweightAgent:
        spec = spec if isinstance(spec, ToolSpec) else tool(spec)
        if spec.name in self.tools:
            raise ConfigError(f"a tool named {spec.name!r} is already registered on {self.name!r}")
        self.tools[spec.name] = spec
        self._schemas, self._counter = None, False
        return self

    def register_tools(self, specs: Iterable[ToolSpec | Callable[..., Any]]) -> LightweightAgent:
        for spec in specs:
            self.register_tool(spec)
        return self

    def set_approver(self, approver: Approver | None) -> LightweightAgent:
        """``approver(call=, arguments=, state=)`` -> bool | Approval (sync or async)."""
        self.executor.approver = approver
        return self

    def as_tool(self, name: str | None = None, description: str | None = None) -> ToolSpec:
        return agent_as_tool(self, name, description)

    def handoff_to(
        self, other: LightweightAgent, description: str | None = None
    ) -> LightweightAgent:
        return self.register_tool(handoff(other, description=description))

    @property
    def status(self) -> AgentStatus:
        """The status of the run started last (IDLE before any). With several runs at once
        it says nothing about the others: ask their ``RunHandle`` instead."""
        return self._last.status if self._last is not None else AgentStatus.IDLE

    @property
    def runs(self) -> tuple[RunHandle, ...]:
        """The handles of this agent's top-level runs in progress, oldest first."""
        return tuple(self._active)

    @property
    def breakers(self) -> dict[str, Any]:
        return self.executor.breakers

    def cancel(self) -> int:
        """Cancel **every** top-level run of this agent in progress, whoever started it; each
        ends ABORTED, reason ``cancelled``. To cancel one request, use its RunHandle."""
        handles = list(self._active)
        for handle in handles:
            handle.cancel()
        return len(handles)

    async def aclose(self) -> None:
        """Cancel this agent's runs in progress, wait for them to end, and close its LLM
        client's own connection pool (an ``httpx.AsyncClient`` you injected stays open)."""
        current = asyncio.current_task()
        tasks = [h.task for h in self._active if h.task is not None and h.task is not current]
        self.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await _aclose(self.llm)

    async def __aenter__(self) -> LightweightAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- running -------------------------------------------------------------------------

    async def run(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None = None,
        system_prompt: str | None = None,
        context: Any = None,
        *,
        handle: RunHandle | None = None,
        budget: Budget | None = None,
    ) -> RunResult:
        """Run until a final answer, a budget, an error or a cancellation. Never raises for
        those: the RunResult says what happened. Raises only for misuse (ConfigError).
        ``handle``: this run's id, status and cancel(); ``budget``: the request's limits
        (default ``config.budget``), shared with the agents this run hands over to or
        runs as tools."""
        return await self._run(
            user_input, messages, system_prompt, context, handle=handle, budget=budget
        )

    def run_sync(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None = None,
        system_prompt: str | None = None,
        context: Any = None,
        *,
        budget: Budget | None = None,
    ) -> RunResult:
        """``run()`` for synchronous code: starts its own event loop and, before closing it,
        closes the connection pools its run opened on it (they cannot outlive the loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                self._run_and_close(user_input, messages, system_prompt, context, budget)
            )
        raise ConfigError(
            "run_sync() cannot be called from a running event loop; use `await agent.run(...)`"
        )

    async def _run_and_close(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None,
        system_prompt: str | None,
        context: Any,
        budget: Budget | None,
    ) -> RunResult:
        handle = RunHandle()
        try:
            return await self._run(
                user_input, messages, system_prompt, context, handle=handle, budget=budget
            )
        finally:
            state = handle.state
            agents = state.scope.agents if state is not None and state.scope else [self]
            for llm in {id(a.llm): a.llm for a in agents}.values():
                await _aclose(llm)

    async def stream(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None = None,
        system_prompt: str | None = None,
        context: Any = None,
        *,
        handle: RunHandle | None = None,
        budget: Budget | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run with streamed LLM calls, yielding events as they happen; ends with RunFinished.
        A stream that breaks after text was yielded is not retried: StreamInterrupted says
        so and the run fails. Closing the iterator early cancels the run."""
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        task = asyncio.create_task(
            self._run(
                user_input,
                messages,
                system_prompt,
                context,
                emit=queue.put_nowait,
                streaming=True,
                handle=handle,
                budget=budget,
            )
        )
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            task.result()  # re-raise a crash of the run itself
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def run_nested(
        self,
        user_input: str | None,
        *,
        parent: RunState,
        span: Span | None,
        messages: list[dict[str, Any]] | None = None,
        handoff: bool = False,
    ) -> RunResult:
        """Run as part of ``parent``'s request: its budget, its trace (under ``span``), one
        level deeper. ``handoff``: continue the parent's conversation and its event stream."""
        return await self._run(
            user_input,
            messages,
            None,
            parent.context,
            emit=parent.emit if handoff else None,
            streaming=parent.streaming if handoff else None,
            parent=parent,
            parent_span=span,
            handoffs=parent.handoffs if handoff else None,
        )

    async def _run(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None = None,
        system_prompt: str | None = None,
        context: Any = None,
        *,
        emit: Callable[[AgentEvent], None] | None = None,
        streaming: bool | None = None,
        handle: RunHandle | None = None,
        budget: Budget | None = None,
        parent: RunState | None = None,
        parent_span: Span | None = None,
        handoffs: list[str] | None = None,
    ) -> RunResult:
        task = asyncio.current_task()
        if parent is None:
            handle = handle or RunHandle()
            handle.task = task
            scope = RequestScope(budget or self.config.budget, handle)
        else:
            assert parent.scope is not None
            scope = parent.scope
        state = self._start(
            user_input, messages, system_prompt, context, emit, parent, parent_span, scope
        )
        state.streaming = self.config.stream if streaming is None else streaming
        state.handoffs = [*(handoffs or ()), self.name]
        if self not in scope.agents:
            scope.agents.append(self)
        if parent is None:
            scope.handle.state = state
            self._active[scope.handle] = None
            scope.arm_timer()
        self._last = state
        try:
            return await self._loop(state, scope, task)
        finally:
            if parent is None:
                scope.disarm_timer()
                self._active.pop(scope.handle, None)

    async def _loop(
        self, state: RunState, scope: RequestScope, task: asyncio.Task[Any] | None
    ) -> RunResult:
        streaming = state.streaming
        decision: NextStep
        try:
            scope.enter(state.depth)
        except LimitExceeded as exc:
            decision = Aborted(TerminationReason(exc.reason), exc)
        else:
            decision = RunAgain()
        while True:
            if type(decision) is RunAgain:
                try:
                    decision = await self._run_step(state, streaming)
                except LimitExceeded as exc:
                    decision = Aborted(TerminationReason(exc.reason), exc)
                except LLMError as exc:
                    decision = Failed(TerminationReason.LLM_ERROR, exc)
                except HookError as exc:
                    decision = Failed(TerminationReason.HOOK_ERROR, exc)
                except asyncio.CancelledError:
                    requested = state.cancel_requested and task is not None
                    if not (requested and task is not None and task.uncancel() == 0):
                        await self._end(
                            state, AgentStatus.ABORTED, TerminationReason.CANCELLED, None, None
                        )
                        raise  # cancelled from outside: record, then let it propagate
                    reason = scope.handle.cancel_reason
                    cause = scope.exhausted if reason is TerminationReason.TIME_LIMIT else None
                    decision = Aborted(reason, cause)
            match decision:
                case RunAgain():
                    continue
                case Finished(content=content, reason=reason):
                    return await self._end(state, AgentStatus.COMPLETED, reason, content, None)
                case Aborted(reason=reason, error=error):
                    summary = await self._summarize(state, reason, error)
                    return await self._end(state, AgentStatus.ABORTED, reason, summary, error)
                case Failed(reason=reason, error=error):
                    return await self._end(state, AgentStatus.FAILED, reason, None, error)
                case HandedOff(agent=agent, span=span):
                    return await self._hand_off(state, agent, span)
                case _:
                    assert_never(decision)

    async def _run_step(self, state: RunState, streaming: bool) -> NextStep:
        """One LLM call and the tool calls it asks for."""
        number = state.consume_step()
        trace = state.trace
        span = trace.start(f"step {number}", STEP, state.span, {"scheduler.step": number})
        started = time.perf_counter()
        try:
            if self.hooks.before_step:
                await self.hooks.fire("before_step", state, span, step=number)
            record = StepRecord(number, await state.check_request())
            state.steps.append(record)
            response = record.response = await self._call_llm(
                state, span, record.input_tokens, streaming
            )
            state.messages.append(response.to_message())
            results: list[ToolResult] = []
            # tool calls cut off by the output limit may have cut arguments: never run them
            calls = response.tool_calls if response.finish_reason != "length" else []
            if calls:
                self._move(state, AgentStatus.EXECUTING)
                results = record.tool_results = await self.executor.run(state, calls, span)
                state.messages.extend([r.to_message() for r in results])
        finally:
            trace.end(span)
        record.duration_s = time.perf_counter() - started
        if self.hooks.after_step:
            await self.hooks.fire("after_step", state, span, step=record)
        if state.emit is not None:
            state.emit(StepFinished(record, time.perf_counter() - state.started))
        if not calls:
            return Finished(
                response.content,
                _FINISH_REASONS.get(response.finish_reason or "", TerminationReason.STOP),
            )
        for result in results:
            if result.handoff is not None:
                return HandedOff(result.handoff.agent, _span_of(span, result))
        limit = state.max_blocked_calls
        if limit is not None and state.blocked_calls > limit:
            raise RepeatedCallsExceeded(results[-1].name, state.blocked_calls, limit)
        self._move(state, AgentStatus.THINKING)
        return RunAgain()

    async def _call_llm(
        self,
        state: RunState,
        parent: Span,
        input_tokens: int | None,
        streaming: bool,
        *,
        tools: bool = True,
        extra: dict[str, Any] | None = None,
    ) -> ChatResponse:
        trace, messages = state.trace, state.messages
        last = self.config.trace_last_messages
        span = trace.start(
            f"chat {self._model}",
            LLM,
            parent,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": self._model,
                "gen_ai.input.messages": tuple(messages if last is None else messages[-last:]),
                "scheduler.input_tokens.counted": input_tokens,
            },
        )
        if self.hooks.before_llm:
            await self.hooks.fire("before_llm", state, span, messages=messages)
        schemas = self._tool_schemas() if tools else None
        params = self._params if extra is None else {**self._params, **extra}

        def on_retry(info: RetryInfo) -> None:
            trace.event(
                span,
                "retry",
                {
                    "attempt": info.attempt,
                    "delay_s": info.delay_s,
                    "error": info.error,
                    "status_code": info.status_code,
                },
            )

        config = self.config
        try:
            try:
                if streaming:
                    response = await self.llm.complete_streaming(
                        messages,
                        tools=schemas,
                        params=params,
                        timeout=config.llm_timeout,
                        deadline=config.llm_deadline,
                        on_retry=on_retry,
                        # deltas only for a consumer: without one, a broken stream is retried
                        on_delta=self._on_delta(state) if state.emit is not None else None,
                    )
                else:
                    response = await self.llm.complete(
                        messages,
                        tools=schemas,
                        params=params,
                        timeout=config.llm_timeout,
                        deadline=config.llm_deadline,
                        on_retry=on_retry,
                    )
            except (LLMError, asyncio.CancelledError):
                raise
            except Exception as exc:  # a ChatModel that does not keep its contract
                raise LLMError(
                    f"the chat model raised {type(exc).__name__}: {safe_str(exc)}"
                ) from exc
        except BaseException as exc:
            trace.end(span, exc if isinstance(exc, Exception) else None)
            if isinstance(exc, LLMError):
                state.usage.retries += exc.attempts - 1
                if isinstance(exc, LLMStreamInterrupted) and state.emit is not None:
                    at = time.perf_counter() - state.started
                    state.emit(StreamInterrupted(state.step, exc, exc.delivered_chars, at))
                if self.hooks.on_error:
                    await self.hooks.fire("on_error", state, span, error=exc)
            raise
        attributes = span.attributes
        attributes["gen_ai.output"] = response
        attributes["gen_ai.response.finish_reasons"] = (response.finish_reason,)
        attributes["gen_ai.response.id"] = response.id
        if response.usage is not None:
            attributes["gen_ai.usage.input_tokens"] = response.usage.prompt_tokens
            attributes["gen_ai.usage.output_tokens"] = response.usage.completion_tokens
        if response.ttft_s is not None:
            attributes["scheduler.ttft_s"] = response.ttft_s
        trace.end(span)
        state.record_response(response)
        if self.hooks.after_llm:
            await self.hooks.fire("after_llm", state, span, response=response)
        return response

    # -- beginning and end ---------------------------------------------------------------

    def _start(
        self,
        user_input: str | None,
        messages: list[dict[str, Any]] | None,
        system_prompt: str | None,
        context: Any,
        emit: Callable[[AgentEvent], None] | None,
        parent: RunState | None,
        parent_span: Span | None,
        scope: RequestScope,
    ) -> RunState:
        config = self.config
        conversation: list[dict[str, Any]] = []
        prompt = system_prompt if system_prompt is not None else config.system_prompt
        history = (
            messages if messages is not None else (self.memory.messages if self.memory else [])
        )
        if prompt and not (history and history[0].get("role") == "system"):
            conversation.append({"role": "system", "content": prompt})
        conversation.extend(history)
        if user_input is not None:
            conversation.append({"role": "user", "content": user_input})
        trace = Trace(
            config.trace_clock,
            parent=None if parent is None else parent.trace,
            max_attribute_chars=config.trace_max_attribute_chars,
            redact=config.trace_redact,
        )
        state = RunState(
            self.name,
            conversation,
            trace,
            context,
            config.max_steps,
            config.token_budget,
            config.max_total_tokens,
            config.max_blocked_calls,
            emit=emit,
        )
        state.scope, state.run_id = scope, scope.handle.id
        state.depth = 1 if parent is None else parent.depth + 1
        state.memory_from = len(conversation) - (user_input is not None)
        if config.token_budget is not None or self.memory is not None:
            state.counter = self._token_counter()
            state.exact_tokens = config.token_counting == "exact"
        state.span = trace.start(
            f"invoke_agent {self.name}",
            AGENT,
            parent_span,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": self.name,
                "gen_ai.request.model": self._model,
            },
        )
        if emit is not None:
            emit(RunStarted(self.name, 0.0, state.run_id))
        self._move(state, AgentStatus.THINKING)
        return state

    async def _end(
        self,
        state: RunState,
        status: AgentStatus,
        reason: TerminationReason,
        content: str | None,
        error: SchedulerError | None,
    ) -> RunResult:
        if state.status is not status:
            self._move(state, status)
        usage, root = state.usage, state.span
        assert root is not None  # set by _start
        attributes = root.attributes
        attributes.update(
            {
                "agent.status": status.value,
                "agent.termination_reason": reason.value,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "scheduler.run.id": state.run_id,
            }
        )
        state.trace.end(root, error)
        result = RunResult(
            status,
            reason,
            content,
            usage,
            state.trace,
            state.messages,
            state.steps,
            None if error is None else safe_str(error),
            error,
            state.hook_errors,
            self.name,
            state.handoffs,
            time.perf_counter() - state.started,
            None if state.first_token_at is None else state.first_token_at - state.started,
            state.transitions,
            state.run_id,
        )
        if state.scope is not None and state.scope.handle.state is state:
            state.scope.handle.result = result
        if self.memory is not None:
            if state.counter is not None:
                self.memory.count_tokens = state.counter.message
            self.memory.save(state.messages[state.memory_from :])
        if (
            error is not None
            and self.hooks.on_error
            and not isinstance(error, (LLMError, HookError))
        ):
            await self.hooks.fire("on_error", state, state.span, error=error)
        if self.hooks.on_complete:
            await self.hooks.fire("on_complete", state, state.span, result=result)
        if state.emit is not None:
            state.emit(RunFinished(result, result.duration_s))
        return result

    async def _summarize(
        self, state: RunState, reason: TerminationReason, error: SchedulerError | None
    ) -> str:
        """What an aborted run tells the user: the LLM's summary (max_steps, if enabled and
        within budget), else the tool results gathered so far — never raw JSON."""
        spent = isinstance(error, RequestBudgetExceeded)  # no LLM call left for a summary
        if (
            reason is TerminationReason.MAX_STEPS
            and self.config.summarize_on_max_steps
            and not spent
        ):
            state.messages.append({"role": "system", "content": SUMMARY_PROMPT})
            try:
                tokens = await state.check_request()
                assert state.span is not None
                response = await self._call_llm(
                    state, state.span, tokens, False, extra={"tool_choice": "none"}
                )
            except SchedulerError:
                response = None
            finally:
                state.messages.pop()
            if response is not None and response.content and not response.tool_calls:
                return response.content
        gathered = [
            f"- {r.name}({flow(r.arguments or {}, 60)[1:-1]}): {preview(r.content, 160)}"
            for step in state.steps
            for r in step.tool_results
            if r.ok and r.handoff is None
        ]
        why = f"{reason.value}: {error}" if error is not None else reason.value
        body = (
            "What was gathered:\n" + "\n".join(gathered)
            if gathered
            else "No tool results were gathered."
        )
        return f"Stopped before a final answer ({why}).\n{body}"

    async def _hand_off(self, state: RunState, agent: LightweightAgent, span: Span) -> RunResult:
        conversation = [m for m in state.messages if m.get("role") != "system"]
        result = await agent.run_nested(
            None, parent=state, span=span, messages=conversation, handoff=True
        )
        self._move(state, result.status)
        state.usage.add(result.usage)
        root = state.span
        assert root is not None
        attributes = root.attributes
        attributes.update(
            {
                "agent.status": result.status.value,
                "agent.termination_reason": result.reason.value,
                "scheduler.handoff.to": agent.name,
            }
        )
        state.trace.end(root)
        result.trace, result.usage = state.trace, state.usage
        result.steps = [*state.steps, *result.steps]
        if self.hooks.on_complete:
            await self.hooks.fire("on_complete", state, state.span, result=result)
        return result

    # -- helpers -------------------------------------------------------------------------

    def _move(self, state: RunState, target: AgentStatus) -> None:
        old = state.status
        state.transition(target)
        if state.emit is not None:
            state.emit(StatusChanged(old, target, time.perf_counter() - state.started))

    def _on_delta(self, state: RunState) -> Callable[[str], None]:
        def on_delta(text: str) -> None:
            now = time.perf_counter()
            if state.first_token_at is None:
                state.first_token_at = now
            if state.emit is not None:
                state.emit(ContentDelta(text, state.step, now - state.started))

        return on_delta

    def _tool_schemas(self) -> list[dict[str, Any]] | None:
        if self._schemas is None:
            self._schemas = [spec.to_openai() for spec in self.tools.values()]
        return self._schemas or None

    def _token_counter(self) -> AgentCounter | None:
        """The agent's exact counter (tiktoken, loaded on first use), or None when counting
        is configured off or tiktoken is unavailable (then: server usage)."""
        if self._counter is False:
            self._counter = None
            if self.config.token_counting != "server":
                try:
                    self._counter = AgentCounter(self.config.system_prompt, self._tool_schemas())
                except (ImportError, RuntimeError, ValueError):
                    self._counter = None
        return self._counter if isinstance(self._counter, AgentCounter) else None


async def _aclose(llm: object) -> None:
    """Close a chat model's own connections, if it has an ``aclose()``."""
    close = getattr(llm, "aclose", None)
    if callable(close):
        await close()


def _span_of(step_span: Span, result: ToolResult) -> Span:
    for child in step_span.children:
        if child.attributes.get("gen_ai.tool.call.id") == result.call_id:
            return child
    return step_span
