"""LightweightAgent: an async tool-calling agent, the scheduler's public face.

Configuration, tools, hooks and breakers are the agent's; everything about one run lives in
that run's ``RunState`` and ``RunHandle`` (id, status, cancel), so one agent serves many
requests at once. The loop itself is ``AgentLoop`` (loop.py). A run and every run it starts
(handoffs, agents run as tools) share one ``RequestScope``: the request's ``Budget`` of
steps, tokens, wall time and depth.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from scheduler.config import AgentConfig
from scheduler.errors import ConfigError
from scheduler.events import AgentEvent
from scheduler.executor import ToolExecutor
from scheduler.hooks import HookRegistry, Hooks
from scheduler.loop import SUMMARY_PROMPT, AgentLoop
from scheduler.memory import ConversationMemory
from scheduler.multiagent import agent_as_tool, handoff
from scheduler.pool import ToolThreadPool
from scheduler.state import RunHandle, RunState
from scheduler.tools import ToolSpec, tool
from scheduler.trace import Span
from scheduler.types import AgentStatus, Approver, Budget, ChatModel, RunResult

__all__ = ["SUMMARY_PROMPT", "LightweightAgent"]


class LightweightAgent(AgentLoop, HookRegistry):
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
        self._model = config.model or str(getattr(llm, "model", "unknown"))
        self._schemas = None
        self._counter = False
        self._active = {}
        self._last, self._last_status = None, AgentStatus.IDLE
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
        return self._last.status if self._last is not None else self._last_status

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
            for llm in {id(a.llm): a.llm for a in (*handle.agents, self)}.values():
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


async def _aclose(llm: object) -> None:
    """Close a chat model's own connections, if it has an ``aclose()``."""
    close = getattr(llm, "aclose", None)
    if callable(close):
        await close()
