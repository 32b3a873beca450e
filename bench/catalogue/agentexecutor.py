"""The catalogue on ``langchain_classic``'s ``AgentExecutor``: its options, callbacks and runnables.

Each cell is one function ``build(kit) -> ask`` (see ``bench.catalogue.kit``); ``plain`` is the
docs' executor (``create_tool_calling_agent`` + ``AgentExecutor``, defaults). AgentExecutor has
no middleware, so its users customise it the ways its docs show: wrap a tool
(``StructuredTool.from_function``), pass call-time callbacks (``config={"callbacks": ...,
"metadata": ...}``; a handler with ``raise_error=True`` stops the run), iterate the steps
(``executor.iter``), give ``create_tool_calling_agent`` its own ``message_formatter``, or
compose the agent runnable by hand (prompt | model | ``ToolsAgentOutputParser``, LCEL) to
route or retry the model call.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any
from uuid import UUID

import openai
from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_classic.agents.format_scratchpad import format_to_tool_messages
from langchain_classic.agents.output_parsers import ToolsAgentOutputParser
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tracers import LangChainTracer
from langsmith.anonymizer import create_anonymizer

from bench.catalogue.customisations import (
    KEYWORD,
    MAX_LIMIT,
    REDACTED,
    REFUND_LIMIT,
    REFUSAL,
    REMINDER,
    RETRY_MAX,
    SECRET_PATTERN,
    SWITCH_AFTER_STEPS,
    TOOL_TIMEOUTS_S,
    USER_BUDGET_TOKENS,
)
from bench.catalogue.kit import Ask, Kit


def plain(kit: Kit) -> Ask:
    agent = create_tool_calling_agent(kit.chat_model(), kit.tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def veto_tool(kit: Kit) -> Ask:
    def with_policy(tool: BaseTool) -> BaseTool:
        async def run(**args: Any) -> Any:
            if tool.name == "issue_refund" and args["amount"] > REFUND_LIMIT:
                return REFUSAL
            return await tool.ainvoke(args)

        return StructuredTool.from_function(
            coroutine=run,
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
        )

    tools = [with_policy(tool) for tool in kit.tools]
    agent = create_tool_calling_agent(kit.chat_model(), tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def rewrite_args(kit: Kit) -> Ask:
    def with_capped_limit(tool: BaseTool) -> BaseTool:
        async def run(**args: Any) -> Any:
            if tool.name == "search_orders" and args["limit"] > MAX_LIMIT:
                args = {**args, "limit": MAX_LIMIT}
            return await tool.ainvoke(args)

        return StructuredTool.from_function(
            coroutine=run,
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
        )

    tools = [with_capped_limit(tool) for tool in kit.tools]
    agent = create_tool_calling_agent(kit.chat_model(), tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def stop_on_keyword(kit: Kit) -> Ask:
    agent = create_tool_calling_agent(kit.chat_model(), kit.tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        async for step in executor.iter({"input": question}):
            observations = [str(obs) for _, obs in step.get("intermediate_step", ())]
            if any(KEYWORD in obs for obs in observations):
                return step
        return step

    return ask


def tool_timeouts(kit: Kit) -> Ask:
    def with_timeout(tool: BaseTool) -> BaseTool:
        seconds = TOOL_TIMEOUTS_S[tool.name]

        async def run(**args: Any) -> Any:
            try:
                return await asyncio.wait_for(tool.ainvoke(args), seconds)
            except TimeoutError:
                return f"{tool.name} timed out after {seconds}s"

        return StructuredTool.from_function(
            coroutine=run,
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
        )

    tools = [with_timeout(tool) for tool in kit.tools]
    agent = create_tool_calling_agent(kit.chat_model(), tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def inject_message(kit: Kit) -> Ask:
    def with_reminder(steps: Any) -> list[Any]:
        if not steps:
            return []
        first, rest = format_to_tool_messages(steps[:1]), format_to_tool_messages(steps[1:])
        return [*first, SystemMessage(REMINDER), *rest]

    agent = create_tool_calling_agent(
        kit.chat_model(), kit.tools, kit.prompt, message_formatter=with_reminder
    )
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def switch_model(kit: Kit) -> Ask:
    first = kit.prompt | kit.chat_model().bind_tools(kit.tools)
    later = kit.prompt | kit.chat_model(kit.large_model).bind_tools(kit.tools)

    def pick_model(inputs: dict[str, Any]) -> Any:
        return later if len(inputs["intermediate_steps"]) >= SWITCH_AFTER_STEPS else first

    agent = (
        RunnablePassthrough.assign(
            agent_scratchpad=lambda x: format_to_tool_messages(x["intermediate_steps"])
        )
        | RunnableLambda(pick_model)
        | ToolsAgentOutputParser()
    )
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def user_budget(kit: Kit) -> Ask:
    class UserTokenBudget(AsyncCallbackHandler):
        raise_error = True  # an exception here stops the run

        def __init__(self) -> None:
            self.spent: Counter[str] = Counter()
            self.users: dict[UUID, str] = {}

        async def on_chat_model_start(
            self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any
        ) -> None:
            user = kwargs["metadata"]["user_id"]
            if self.spent[user] >= USER_BUDGET_TOKENS:
                raise RuntimeError(f"{user} has spent the token budget")
            self.users[run_id] = user

        async def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            usage = response.generations[0][0].message.usage_metadata or {}
            self.spent[self.users.pop(run_id)] += usage.get("total_tokens", 0)

    budget = UserTokenBudget()
    agent = create_tool_calling_agent(kit.chat_model(), kit.tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        config = {"callbacks": [budget], "metadata": {"user_id": user}}
        return await executor.ainvoke({"input": question}, config=config)

    return ask


def retry_one_class(kit: Kit) -> Ask:
    model = (
        kit.chat_model(max_retries=0)
        .bind_tools(kit.tools)
        .with_retry(
            retry_if_exception_type=(openai.RateLimitError,),
            stop_after_attempt=RETRY_MAX + 1,
            wait_exponential_jitter=False,
        )
    )
    agent = (
        RunnablePassthrough.assign(
            agent_scratchpad=lambda x: format_to_tool_messages(x["intermediate_steps"])
        )
        | kit.prompt
        | model
        | ToolsAgentOutputParser()
    )
    # a streamed agent step is not retried by with_retry: the one documented flag turns it off
    executor = AgentExecutor(agent=agent, tools=kit.tools, stream_runnable=False)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question})

    return ask


def redact_trace(kit: Kit) -> Ask:
    anonymizer = create_anonymizer([{"pattern": SECRET_PATTERN, "replace": REDACTED}])
    tracer = LangChainTracer(client=kit.trace_client(anonymizer=anonymizer))
    agent = create_tool_calling_agent(kit.chat_model(), kit.tools, kit.prompt)
    executor = AgentExecutor(agent=agent, tools=kit.tools)

    async def ask(user: str, question: str) -> Any:
        return await executor.ainvoke({"input": question}, config={"callbacks": [tracer]})

    return ask
