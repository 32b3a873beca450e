"""``scheduler``, ``scheduler-stream`` and ``scheduler-plain``: our ``LightweightAgent``.

``scheduler`` and ``scheduler-stream`` build the agent in ``prepare`` with every feature a
production deployment would keep: the trace (always on), a ``before_tool`` audit hook that
writes one structured record per tool call (read back after each run, so the work is real),
the per-tool circuit breaker, the repeated-call guard, the exact token budget, human
confirmation answered by an approver, per-tool and per-LLM-attempt timeouts, and client
retries. ``scheduler-plain`` is the same loop with those production guards off (no budget,
breaker, loop guard, confirmation or hook; trace, timeouts and retries kept), so the cost of
our features is shown the way LangChain's middleware cost is. The scenario's limits map one
to one:

==================== =========================================================
scenario limit        scheduler knob
==================== =========================================================
max_steps             ``AgentConfig.max_steps`` (LLM steps; then one summary call)
tool_timeout_s        ``AgentConfig.tool_timeout`` (per call; async tools cancelled)
llm_timeout_s         ``AgentConfig.llm_timeout`` (per attempt) and the client timeout
max_retries           ``OpenAIChatClient(max_retries=...)``
max_same_tool_calls   ``AgentConfig.max_same_tool_calls`` (the loop guard)
token_budget          ``AgentConfig.token_budget`` (exact count, before each request)
breaker_threshold     ``AgentConfig.breaker_threshold``
require_confirmation  ``ToolSpec(require_confirmation=True)``; the approver answers
                      with the tool's scripted ``approval`` (a "no" is told to the LLM)
run deadline          ``asyncio.timeout`` around the run (the harness's, as for all)
==================== =========================================================

(``scheduler-plain`` keeps only max_steps, the timeouts, the retries and the deadline.)

``temperature`` is left unset (``AgentConfig`` defaults to 0.1) so the request bodies carry
the same fields as the other engines'. ``scheduler`` calls ``await agent.run(...)``;
``scheduler-stream`` consumes ``agent.stream(...)`` (streamed LLM calls) and measures its
TTFT: the time to the first ``ContentDelta`` of the step that gave the final answer. With
``RunContext.stream_tokens``, ``scheduler`` consumes ``agent.stream(...)`` the same way.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.engines.kit.tools import build_tools
from bench.model.mock import PLACEHOLDER_KEY
from bench.referee.transport import BASE_URL
from scheduler import AgentConfig, ContentDelta, LightweightAgent, RunFinished, ToolSpec
from scheduler.llm import OpenAIChatClient


@dataclass
class SchedulerPrepared(Prepared):
    agent: LightweightAgent
    user: str
    history: list[dict[str, Any]] | None
    deadline_s: float
    audit: AuditLog | None


# the scheduler's termination reasons that the harness names otherwise (base.TERMINATIONS)
_TERMINATIONS = {"repeated_calls": "tool_limit"}


def production_guards(limits: Any) -> dict[str, Any]:
    """The scheduler's built-in production guards, configured from the scenario's limits
    (``scheduler-plain`` runs with all of them off)."""
    return {
        "token_budget": limits.token_budget,
        "max_same_tool_calls": limits.max_same_tool_calls,
        "breaker_threshold": limits.breaker_threshold,
    }


PLAIN = dict.fromkeys(
    ("token_budget", "max_same_tool_calls", "breaker_threshold", "max_blocked_calls")
)


def agent_config(scenario: Any, production: bool) -> AgentConfig:
    """The agent's settings from the scenario's limits (``production``: the guards on)."""
    limits = scenario.limits
    return AgentConfig(
        name=scenario.name,
        system_prompt=scenario.system_prompt,
        temperature=None,
        max_steps=limits.max_steps,
        tool_timeout=limits.tool_timeout_s,
        llm_timeout=limits.llm_timeout_s,
        **(production_guards(limits) if production else PLAIN),
    )


def scripted_approver(tools: list[Any]) -> Any:
    """The approver a service writes: here it answers with each tool's scripted approval."""
    approvals: dict[str, bool] = {
        tool.name: tool.definition.approval == "approve" for tool in tools
    }

    def approve(call: Any, **_: Any) -> bool:
        return approvals[call.name]

    return approve


class AuditLog:
    """A production-style audit trail: one structured record per tool call, as a service
    would ship to its log pipeline (serialised here, read back by the engine after each run)."""

    def __init__(self) -> None:
        self.records: list[str] = []

    def before_tool(self, *, state: Any, call: Any, arguments: dict[str, Any]) -> None:
        self.records.append(
            json.dumps(
                {
                    "agent": state.agent_name,
                    "step": state.step,
                    "tool": call.name,
                    "call_id": call.id,
                    "arguments": arguments,
                },
                default=str,
            )
        )

    def drain(self) -> list[str]:
        records, self.records = self.records, []
        return records


class SchedulerEngine(RecordingEngine):
    production = True

    def chat_model(self, ctx: Any) -> Any:
        """The chat client, on a recording httpx client (the one provider-specific step)."""
        limits = ctx.scenario.limits
        base_url = ctx.base_url if ctx.transport == "loopback" else (ctx.base_url or BASE_URL)
        return OpenAIChatClient(
            base_url=base_url,
            model=f"scenario/{ctx.scenario.name}",
            api_key=PLACEHOLDER_KEY,
            timeout=limits.llm_timeout_s,
            http_client=self.http_client(ctx, "httpx"),
            max_retries=limits.max_retries,
        )

    async def prepare(self, ctx: Any) -> SchedulerPrepared:
        scenario = ctx.scenario
        llm = self.chat_model(ctx)
        guards = self.production
        config = agent_config(scenario, guards)
        tools = build_tools(scenario)
        agent = LightweightAgent(llm, config, approver=scripted_approver(tools) if guards else None)
        agent.register_tools(
            ToolSpec(
                name=tool.name,
                description=tool.description,
                parameters=tool.parameters,
                handler=tool.acall,
                require_confirmation=guards and tool.definition.require_confirmation,
            )
            for tool in tools
        )
        audit = AuditLog() if guards else None
        if audit is not None:
            agent.on("before_tool", audit.before_tool)
        history = [{"role": m.role, "content": m.content} for m in scenario.history] or None
        return SchedulerPrepared(
            ctx=ctx,
            accounting=self.accounting(ctx),
            agent=agent,
            user=scenario.user,
            history=history,
            deadline_s=run_timeout_s(ctx),
            audit=audit,
        )

    def before_run(self, p: SchedulerPrepared) -> None:
        # Every run starts with closed breakers: a benchmark run stands for a fresh request,
        # not for the same service minutes later (in production the breakers would persist).
        p.agent.breakers.clear()

    async def execute(self, p: SchedulerPrepared) -> Outcome:
        try:
            async with asyncio.timeout(p.deadline_s) as deadline:
                result, ttft_ms = await self.invoke(p)
        except TimeoutError:
            if deadline.expired():
                return Outcome(
                    "aborted", None, "timeout", error=f"run deadline {p.deadline_s:g}s exceeded"
                )
            raise
        extra = {"retries": result.usage.retries, "hook_errors": len(result.hook_errors)}
        if p.audit is not None:
            extra["audit_records"] = len(p.audit.drain())
        return Outcome(
            status=result.status.value,
            final_answer=result.content,
            termination=_TERMINATIONS.get(result.reason.value, result.reason.value),
            error=result.detail,
            trace=result.trace,  # converted to a dict after the timed region
            ttft_ms=ttft_ms,
            extra=extra,
        )

    async def invoke(self, p: SchedulerPrepared) -> tuple[Any, float | None]:
        if p.ctx.stream_tokens:
            return await stream_run(p)
        return await p.agent.run(p.user, messages=p.history), None


async def stream_run(p: SchedulerPrepared) -> tuple[Any, float | None]:
    """Consume ``agent.stream()``: the result, and the time to the first content delta of
    the last step that streamed content (the final answer; earlier steps' text is not it)."""
    started = time.perf_counter()
    step: int | None = None
    first: float | None = None
    result = None
    async for event in p.agent.stream(p.user, messages=p.history):
        if isinstance(event, ContentDelta):
            if event.text and event.step != step:
                step, first = event.step, time.perf_counter()
        elif isinstance(event, RunFinished):
            result = event.result
    if result is None:
        raise RuntimeError("agent.stream() ended without a RunFinished event")
    if first is None or not result.content:
        return result, None
    return result, (first - started) * 1000


class SchedulerPlainEngine(SchedulerEngine):
    production = False


class SchedulerStreamEngine(SchedulerEngine):
    async def invoke(self, p: SchedulerPrepared) -> tuple[Any, float | None]:
        return await stream_run(p)
