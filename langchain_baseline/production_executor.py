"""``AgentExecutor`` configured for production: the executor's own options, configured.

=============================  ============================================================
``stream_runnable=False``      one call per step, no streaming underneath (the executor
                               streams its agent by default, which costs without a stream)
``max_iterations``             ``max_steps``; ends with the sentinel answer "Agent stopped
                               due to max iterations."
``max_execution_time``         the run deadline (its only time knob; same sentinel)
``handle_parsing_errors=True`` a model turn the agent cannot parse goes back to the model
                               as an observation instead of raising
``handle_tool_error=True``     on every tool: a ``ToolException`` becomes the observation;
(and ``handle_validation_      any other exception still ends the run, so the tools must
error=True``)                  raise ``ToolException`` (``custom_executor`` makes them)
=============================  ============================================================

Not used: ``trim_intermediate_steps`` (an ``int`` keeps the last N steps, which does not
shrink one oversized observation; a callable that does is custom code, and the budget guard
of ``custom_executor`` already stops such a request), ``early_stopping_method="generate"``
(one more LLM call after the limit, with a prompt the tool-calling agent does not support).

``build_tool_calling_executor_prod(..., guards=ExecutorGuards(...))`` adds the custom code
(``custom_executor``); without it, the built-ins alone (``lc-agentexecutor-builtins``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

from langchain_baseline.common import AgentSettings, ToolLike, validated_tools
from langchain_baseline.custom_executor import ExecutorGuards


def build_tool_calling_executor_prod(
    llm: ChatOpenAI,
    tools: Sequence[ToolLike],
    system_prompt: str,
    settings: AgentSettings,
    *,
    guards: ExecutorGuards | None = None,
) -> AgentExecutor:
    """``AgentExecutor`` + the tool-calling agent with the production options set; with
    ``guards``, its tools, its agent and its call-time callbacks come from them."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "{system_prompt}"),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    ).partial(system_prompt=system_prompt)
    executor_tools = guards.tools(tools) if guards else validated_tools(tools)
    for tool in executor_tools:
        tool.handle_tool_error = tool.handle_validation_error = True
    agent = (
        guards.agent(llm, executor_tools, prompt)
        if guards
        else create_tool_calling_agent(llm, executor_tools, prompt)
    )
    return AgentExecutor(
        agent=agent,
        tools=executor_tools,
        max_iterations=settings.max_iterations,
        max_execution_time=settings.max_execution_time_s,
        stream_runnable=False,
        handle_parsing_errors=True,
    )


def executor_config(guards: ExecutorGuards | None) -> dict[str, Any] | None:
    """The call-time config: the guards' callbacks (callbacks given at call time see the LLM
    and tool events; given to the constructor they would see only the executor's own)."""
    return {"callbacks": list(guards.callbacks)} if guards else None
