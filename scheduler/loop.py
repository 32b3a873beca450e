"""The loop of ``LightweightAgent``: one run, step by step.

``_run()`` starts a run (its ``RunState``, in its request's ``RequestScope``) and hands it to
``_loop()``: one loop over ``_run_step()``, which returns what to do next as a small typed
union (``RunAgain | Finished | Aborted | Failed | HandedOff``) dispatched with ``match``.
All run state lives in ``RunState`` (state.py), which guards its own budgets; tool
execution lives in executor.py, the HTTP client in llm.py. The loop prints nothing: it
records spans (trace.py) and emits events (events.py) for whoever wants to show them.

``AgentLoop`` holds no per-run data: one agent serves many runs at once. The public face —
configuration, tools, hooks, ``run()`` / ``stream()`` / ``run_sync()``, handles, closing —
is ``LightweightAgent`` in agent.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
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
from scheduler.hooks import Hooks
from scheduler.memory import ConversationMemory
from scheduler.state import RequestScope, RunHandle, RunState
from scheduler.tokens import AgentCounter
from scheduler.tools import ToolSpec
from scheduler.trace import AGENT, LLM, STEP, Span, Trace, flow, preview
from scheduler.types import (
    Aborted,
    AgentStatus,
    Budget,
    ChatModel,
    ChatResponse,
    Failed,
    Finished,
    HandedOff,
    NextStep,
    RetryInfo,
    RunAgain,
    RunResult,
    StepRecord,
    TerminationReason,
    ToolResult,
)

SUMMARY_PROMPT = (
    "You have run out of steps. Do not call any tool. Tell the user briefly what you found "
    "so far and what is still missing."
)
_FINISH_REASONS = {
    "length": TerminationReason.LENGTH,
    "content_filter": TerminationReason.CONTENT_FILTER,
}


class AgentLoop:
    """The run loop; ``LightweightAgent`` sets these attributes and adds the public API."""

    name: str
    llm: ChatModel
    config: AgentConfig
    hooks: Hooks
    tools: dict[str, ToolSpec]
    executor: ToolExecutor
    memory: ConversationMemory | None
    _params: dict[str, Any]
    _model: str
    _schemas: list[dict[str, Any]] | None
    _counter: AgentCounter | bool | None  # False: not built yet
    _active: dict[RunHandle, None]  # top-level runs in progress (ordered)
    _last: RunState | None  # the run started last, while it goes on
    _last_status: AgentStatus  # ... and its status once it ended

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
            if handle.state is not None or handle.result is not None:
                raise ConfigError(f"{handle!r} already served a run: use one RunHandle per run")
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
            if self._last is state:  # keep its status, not the run (no data outlives it)
                self._last, self._last_status = None, state.status
            if parent is None:
                scope.disarm_timer()
                self._active.pop(scope.handle, None)
                scope.handle.finish(scope)

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
                    if not (state.cancel_requested and task is not None and task.uncancel() == 0):
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
                "gen_ai.provider.name": getattr(self.llm, "provider", "openai"),
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
            trace.event(span, "retry", info.attributes())

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
            except BaseException as exc:  # a ChatModel that does not keep its contract
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
            self.memory.save(state.messages[state.memory_from :], state.counter)
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

    async def _hand_off(self, state: RunState, agent: AgentLoop, span: Span) -> RunResult:
        conversation = [m for m in state.messages if m.get("role") != "system"]
        result = await agent._run(
            None,
            conversation,
            None,
            state.context,
            emit=state.emit,
            streaming=state.streaming,
            parent=state,
            parent_span=span,
            handoffs=state.handoffs,
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


def _span_of(step_span: Span, result: ToolResult) -> Span:
    for child in step_span.children:
        if child.attributes.get("gen_ai.tool.call.id") == result.call_id:
            return child
    return step_span
