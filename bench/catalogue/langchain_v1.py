"""The catalogue on LangChain 1.x ``create_agent``: middleware and callbacks, as its docs write them.

Each cell is one function ``build(kit) -> ask`` (see ``bench.catalogue.kit``): the agent with
the customisation, and how a service calls it. ``plain`` is the same agent without any
customisation; a cell's cost is its statements beyond ``plain``'s. The middleware are the
decorators of LangChain's "custom middleware" guide (``@wrap_tool_call``, ``@wrap_model_call``,
``@before_model``, ``@after_model``) and its built-in ``ModelRetryMiddleware``; per-user
state comes in through the documented runtime context (``context_schema`` / ``context=``);
the trace is LangSmith's, redacted with its documented anonymizer.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

import openai
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentState,
    ModelRetryMiddleware,
    after_model,
    before_model,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tracers import LangChainTracer
from langgraph.runtime import Runtime
from langsmith.anonymizer import create_anonymizer

from bench.catalogue.customisations import (
    KEYWORD,
    MAX_LIMIT,
    REDACTED,
    REFUND_LIMIT,
    REFUSAL,
    REMINDER,
    RETRY_DELAY_S,
    RETRY_MAX,
    SECRET_PATTERN,
    SWITCH_AFTER_STEPS,
    TOOL_TIMEOUTS_S,
    USER_BUDGET_TOKENS,
)
from bench.catalogue.kit import Ask, Kit


def plain(kit: Kit) -> Ask:
    agent = create_agent(kit.chat_model(), tools=kit.tools, system_prompt=kit.system_prompt)

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def veto_tool(kit: Kit) -> Ask:
    @wrap_tool_call
    async def refund_policy(request: Any, handler: Any) -> Any:
        call = request.tool_call
        if call["name"] == "issue_refund" and call["args"]["amount"] > REFUND_LIMIT:
            return ToolMessage(REFUSAL, tool_call_id=call["id"], status="error")
        return await handler(request)

    agent = create_agent(
        kit.chat_model(),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[refund_policy],
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def rewrite_args(kit: Kit) -> Ask:
    @wrap_tool_call
    async def cap_limit(request: Any, handler: Any) -> Any:
        call = request.tool_call
        if call["name"] == "search_orders" and call["args"]["limit"] > MAX_LIMIT:
            capped = {**call, "args": {**call["args"], "limit": MAX_LIMIT}}
            request = request.override(tool_call=capped)
        return await handler(request)

    agent = create_agent(
        kit.chat_model(), tools=kit.tools, system_prompt=kit.system_prompt, middleware=[cap_limit]
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def stop_on_keyword(kit: Kit) -> Ask:
    @before_model(can_jump_to=["end"])
    async def stop_on_escalation(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage) and KEYWORD in last.text:
            return {"jump_to": "end"}
        return None

    agent = create_agent(
        kit.chat_model(),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[stop_on_escalation],
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def tool_timeouts(kit: Kit) -> Ask:
    @wrap_tool_call
    async def per_tool_timeout(request: Any, handler: Any) -> Any:
        name, seconds = request.tool_call["name"], TOOL_TIMEOUTS_S[request.tool_call["name"]]
        try:
            return await asyncio.wait_for(handler(request), seconds)
        except TimeoutError:
            text = f"{name} timed out after {seconds}s"
            return ToolMessage(text, tool_call_id=request.tool_call["id"], status="error")

    agent = create_agent(
        kit.chat_model(),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[per_tool_timeout],
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def inject_message(kit: Kit) -> Ask:
    @before_model
    async def remind(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        messages = state["messages"]
        tool_results = any(isinstance(m, ToolMessage) for m in messages)
        if tool_results and not any(m.text == REMINDER for m in messages):
            return {"messages": [SystemMessage(REMINDER)]}
        return None

    agent = create_agent(
        kit.chat_model(), tools=kit.tools, system_prompt=kit.system_prompt, middleware=[remind]
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def switch_model(kit: Kit) -> Ask:
    large = kit.chat_model(kit.large_model)

    @wrap_model_call
    async def switch_after_steps(request: Any, handler: Any) -> Any:
        steps = sum(isinstance(m, AIMessage) for m in request.messages)
        if steps >= SWITCH_AFTER_STEPS:
            request = request.override(model=large)
        return await handler(request)

    agent = create_agent(
        kit.chat_model(),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[switch_after_steps],
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def user_budget(kit: Kit) -> Ask:
    @dataclass
    class UserContext:
        user_id: str

    spent: Counter[str] = Counter()

    @before_model(can_jump_to=["end"])
    async def refuse_when_spent(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        if spent[runtime.context.user_id] >= USER_BUDGET_TOKENS:
            return {"jump_to": "end"}
        return None

    @after_model
    async def count_tokens(state: AgentState, runtime: Runtime) -> None:
        usage = state["messages"][-1].usage_metadata or {}
        spent[runtime.context.user_id] += usage.get("total_tokens", 0)

    agent = create_agent(
        kit.chat_model(),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[refuse_when_spent, count_tokens],
        context_schema=UserContext,
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke(
            {"messages": [{"role": "user", "content": question}]}, context=UserContext(user)
        )

    return ask


def retry_one_class(kit: Kit) -> Ask:
    retry_rate_limits = ModelRetryMiddleware(
        max_retries=RETRY_MAX,
        retry_on=(openai.RateLimitError,),
        on_failure="error",
        initial_delay=RETRY_DELAY_S,
        backoff_factor=1.0,
        jitter=False,
    )
    agent = create_agent(
        kit.chat_model(max_retries=0),
        tools=kit.tools,
        system_prompt=kit.system_prompt,
        middleware=[retry_rate_limits],
    )

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke({"messages": [{"role": "user", "content": question}]})

    return ask


def redact_trace(kit: Kit) -> Ask:
    anonymizer = create_anonymizer([{"pattern": SECRET_PATTERN, "replace": REDACTED}])
    tracer = LangChainTracer(client=kit.trace_client(anonymizer=anonymizer))
    agent = create_agent(kit.chat_model(), tools=kit.tools, system_prompt=kit.system_prompt)

    async def ask(user: str, question: str) -> Any:
        return await agent.ainvoke(
            {"messages": [{"role": "user", "content": question}]}, config={"callbacks": [tracer]}
        )

    return ask
