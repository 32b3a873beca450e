"""The catalogue on our scheduler: its hooks, its config, its ``RunHandle`` and ``Budget``.

Each cell is one function ``build(kit) -> ask`` (see ``bench.catalogue.kit``); ``plain`` is
``LightweightAgent`` with its default ``AgentConfig``. Where ``docs/scheduler.md`` has a
knob, the cell sets it (``ToolSpec.timeout``, ``AgentConfig.trace_redact``, ``run(...,
budget=Budget(...))``); where it has a hook, the cell registers one (``before_tool`` returns
``Veto`` / ``Rewrite``; ``before_step`` appends to the run's ``messages``; ``after_tool``
cancels the run through its ``RunHandle``). The scheduler has no per-step model choice and
no per-error-class retry: those cells wrap the chat model behind the public ``ChatModel``
protocol (composition; only ``complete``, which ``run()`` calls — ``stream()`` would need
``complete_streaming`` too).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections import Counter
from typing import Any

from bench.catalogue.customisations import (
    KEYWORD,
    MAX_LIMIT,
    REDACTED,
    REFUND_LIMIT,
    REFUSAL,
    REMINDER,
    RETRY_DELAY_S,
    RETRY_MAX,
    RETRY_STATUS,
    SECRET_PATTERN,
    SWITCH_AFTER_STEPS,
    TOOL_TIMEOUTS_S,
    USER_BUDGET_TOKENS,
)
from bench.catalogue.kit import Ask, Kit
from scheduler import (
    AgentConfig,
    Budget,
    ChatResponse,
    LightweightAgent,
    LLMStatusError,
    Rewrite,
    RunState,
    ToolCall,
    ToolResult,
    Veto,
)


def plain(kit: Kit) -> Ask:
    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def veto_tool(kit: Kit) -> Ask:
    def refund_policy(state: RunState, call: ToolCall, arguments: dict[str, Any]) -> Veto | None:
        if call.name == "issue_refund" and arguments["amount"] > REFUND_LIMIT:
            return Veto(REFUSAL)
        return None

    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools
    )
    agent.on("before_tool", refund_policy)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def rewrite_args(kit: Kit) -> Ask:
    def cap_limit(state: RunState, call: ToolCall, arguments: dict[str, Any]) -> Rewrite | None:
        if call.name == "search_orders" and arguments["limit"] > MAX_LIMIT:
            return Rewrite({**arguments, "limit": MAX_LIMIT})
        return None

    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools
    )
    agent.on("before_tool", cap_limit)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def stop_on_keyword(kit: Kit) -> Ask:
    def stop_on_escalation(state: RunState, result: ToolResult) -> None:
        if KEYWORD in result.content:
            raise RuntimeError(f"{result.name} asked to escalate: {result.content}")

    config = AgentConfig(system_prompt=kit.system_prompt, raise_hook_errors=True)
    agent = LightweightAgent(kit.chat_model(), config, tools=kit.tools)
    agent.on("after_tool", stop_on_escalation)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def tool_timeouts(kit: Kit) -> Ask:
    tools = [dataclasses.replace(t, timeout=TOOL_TIMEOUTS_S[t.name]) for t in kit.tools]
    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=tools
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def inject_message(kit: Kit) -> Ask:
    def remind(state: RunState, step: int) -> None:
        if step == 2:  # the first tool results are in
            state.messages.append({"role": "system", "content": REMINDER})

    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools
    )
    agent.on("before_step", remind)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def switch_model(kit: Kit) -> Ask:
    class SwitchAfterSteps:
        """A ChatModel that names ``later`` once the conversation has that many steps."""

        def __init__(self, llm: Any, later: str):
            self.llm, self.model, self.later = llm, llm.model, later

        async def complete(self, messages: list[dict[str, Any]], **options: Any) -> ChatResponse:
            steps = sum(m["role"] == "assistant" for m in messages)
            if steps >= SWITCH_AFTER_STEPS:
                options["params"] = {**(options.get("params") or {}), "model": self.later}
            return await self.llm.complete(messages, **options)

    llm = SwitchAfterSteps(kit.chat_model(), kit.large_model)
    agent = LightweightAgent(llm, AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def user_budget(kit: Kit) -> Ask:
    agent = LightweightAgent(
        kit.chat_model(), AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools
    )
    spent: Counter[str] = Counter()

    async def ask(user: str, question: str) -> Any:
        left = USER_BUDGET_TOKENS - spent[user]
        if left <= 0:
            return None  # refused: the budget is spent
        result = await agent.run(question, budget=Budget(max_total_tokens=left))
        spent[user] += result.usage.total_tokens
        return result

    return ask


def retry_one_class(kit: Kit) -> Ask:
    class RetryRateLimits:
        """A ChatModel that retries HTTP 429 only, RETRY_MAX times, RETRY_DELAY_S apart."""

        def __init__(self, llm: Any):
            self.llm, self.model = llm, llm.model

        async def complete(self, messages: list[dict[str, Any]], **options: Any) -> ChatResponse:
            for _ in range(RETRY_MAX):
                try:
                    return await self.llm.complete(messages, **options)
                except LLMStatusError as exc:
                    if exc.status_code != RETRY_STATUS:
                        raise
                await asyncio.sleep(RETRY_DELAY_S)
            return await self.llm.complete(messages, **options)

    llm = RetryRateLimits(kit.chat_model(max_retries=0))
    agent = LightweightAgent(llm, AgentConfig(system_prompt=kit.system_prompt), tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await agent.run(question)

    return ask


def redact_trace(kit: Kit) -> Ask:
    secret = re.compile(SECRET_PATTERN)

    def redact(key: str, value: Any) -> Any:
        if isinstance(value, str):
            return secret.sub(REDACTED, value)
        if isinstance(value, list | tuple):
            return [redact(key, v) for v in value]
        if isinstance(value, dict):
            return {k: redact(key, v) for k, v in value.items()}
        return value

    config = AgentConfig(system_prompt=kit.system_prompt, trace_redact=redact)
    agent = LightweightAgent(kit.chat_model(), config, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        result = await agent.run(question)
        kit.traces.extend([result.trace.to_json(), result.trace.render()])
        return result

    return ask
