"""Four LangChain agents, each built the way LangChain's own docs build it.

1. ``build_tool_calling_executor`` — ``AgentExecutor`` + ``create_tool_calling_agent`` from
   ``langchain_classic.agents``, with the docs' prompt (system, ``chat_history``
   placeholder, human, ``agent_scratchpad`` placeholder) and default settings. The
   executor streams its agent runnable by default (``stream_runnable=True``).
2. The same with ``stream_runnable=False`` — what a careful user picks for lower latency.
3. ``build_react_executor`` — ``AgentExecutor`` + ``create_react_agent`` with the standard
   ReAct prompt (``hwchase17/react``), inlined below because the hub is unreachable.
4. ``build_create_agent`` — LangChain 1.x ``langchain.agents.create_agent`` (a LangGraph
   graph), no middleware.

The model is ``ChatOpenAI(model=..., base_url=..., api_key=..., stream_usage=True,
timeout=..., max_retries=...)``; the caller may pass its own ``httpx2.AsyncClient`` as
``http_async_client`` (the openai SDK 3.x sends through httpx2). Tools are
``StructuredTool``\\s whose ``args_schema`` is the tool's JSON Schema dict, passed through
unchanged, so the LLM sees exactly that schema; ReAct gets single-input ``Tool``\\s instead
(see ``react_tools``).

How the scenario limits map onto LangChain's knobs (``AgentSettings.from_limits``)
------------------------------------------------------------------------------------

=====================  ==============================  =================================
scenario limit         AgentExecutor (1-3)             create_agent (4)
=====================  ==============================  =================================
max_steps = N          ``max_iterations=N`` (N LLM     ``recursion_limit=2*N`` in the
                       calls, then a sentinel          run config (a model and a tools
                       string such as "Agent stopped   superstep per step: N LLM calls,
                       due to max iterations.")        then ``GraphRecursionError``)
llm_timeout_s          ``ChatOpenAI(timeout=...)``, per HTTP attempt (openai SDK)
max_retries            ``ChatOpenAI(max_retries=...)``: the openai SDK retries 408, 409,
                       429, 5xx, timeouts and connection errors, honouring Retry-After
run_timeout_s          ``max_execution_time`` (the     none; LangGraph's
(the run deadline)     only time knob; returns the     ``step_timeout`` bounds each
                       same sentinel string)           superstep, not the run
tool_timeout_s         **none**                        **none**
max_same_tool_calls    **none** (no loop guard)        **none** (``ToolCallLimitMiddleware``
                                                       caps calls per tool, not repeats)
breaker_threshold      **none** (no circuit breaker)   **none**
token_budget           **none**                        **none** (``SummarizationMiddleware``
                                                       shrinks context; it is no budget)
require_confirmation   **none** (the tool just runs)   ``HumanInTheLoopMiddleware`` needs a
                                                       checkpointer and a resume round
                                                       trip; not used
=====================  ==============================  =================================

Behaviour at the edges, with the defaults kept:

- A tool that raises: ``AgentExecutor`` re-raises anything that is not a ``ToolException``
  (``handle_tool_error`` only converts those), so the run ends with the exception;
  ``create_agent``'s ``ToolNode`` re-raises everything except argument-binding errors.
- A hung tool: nothing cuts it but the run deadline. Our tools are coroutines, so the
  deadline's cancellation stops them. A *sync* tool would run in an executor thread, and
  no timeout can stop that thread: it stays blocked (holding a pool slot) after the run
  has given up.
- An unknown tool: ``AgentExecutor`` answers with ``InvalidTool``'s observation ("X is not
  a valid tool, try one of [...]"); ``ToolNode`` with an error ``ToolMessage``.
- ReAct text that does not parse: ``handle_parsing_errors`` stays at its default (False),
  so the executor raises.

This module imports LangChain only; it never imports ``scheduler`` (or ``bench``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain.agents import create_agent
from langchain_classic.agents import AgentExecutor, create_react_agent, create_tool_calling_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.tools import StructuredTool, Tool
from langchain_openai import ChatOpenAI

# AgentExecutor's answers when max_iterations or max_execution_time cut the run: the
# single-action agents (ReAct) say the first, the multi-action tool-calling agent the second
# (for a time limit too)
STOPPED_SENTINELS = (
    "Agent stopped due to iteration limit or time limit.",
    "Agent stopped due to max iterations.",
)

# hwchase17/react, verbatim (https://smith.langchain.com/hub/hwchase17/react)
REACT_TEMPLATE = """Answer the following questions as best you can. You have access to the following tools:

{tools}

Use the following format:

Question: the input question you must answer
Thought: you should always think about what to do
Action: the action to take, should be one of [{tool_names}]
Action Input: the input to the action
Observation: the result of the action
... (this Thought/Action/Action Input/Observation can repeat N times)
Thought: I now know the final answer
Final Answer: the final answer to the original input question

Begin!

Question: {input}
Thought:{agent_scratchpad}"""


class ToolLike(Protocol):
    """What a tool must offer to be wrapped: a name, a description, a JSON Schema and code."""

    name: str
    description: str
    parameters: dict[str, Any]

    def call(self, **kwargs: Any) -> Any: ...

    def acall(self, **kwargs: Any) -> Awaitable[Any]: ...


@dataclass(frozen=True)
class AgentSettings:
    """The framework knobs one scenario's limits map to (see the module docstring)."""

    max_iterations: int = 15
    request_timeout_s: float = 20.0
    max_retries: int = 3
    max_execution_time_s: float | None = None

    @classmethod
    def from_limits(cls, limits: Any, run_timeout_s: float | None = None) -> AgentSettings:
        """Map a scenario's ``limits`` (max_steps, llm_timeout_s, max_retries)."""
        return cls(
            max_iterations=limits.max_steps,
            request_timeout_s=limits.llm_timeout_s,
            max_retries=limits.max_retries,
            max_execution_time_s=run_timeout_s,
        )

    @property
    def recursion_limit(self) -> int:
        """LangGraph supersteps for ``max_iterations`` steps (model + tools per step)."""
        return 2 * self.max_iterations


def make_chat_model(
    *,
    model: str,
    base_url: str,
    settings: AgentSettings,
    api_key: str = "sk-schedbench-mock",
    http_async_client: Any = None,
) -> ChatOpenAI:
    """``ChatOpenAI`` pointed at an OpenAI-compatible server."""
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.request_timeout_s,
        max_retries=settings.max_retries,
        stream_usage=True,
        http_async_client=http_async_client,
    )


def structured_tools(tools: Sequence[ToolLike]) -> list[StructuredTool]:
    """One ``StructuredTool`` per tool, its JSON Schema dict passed as ``args_schema``."""
    return [
        StructuredTool.from_function(
            func=tool.call,
            coroutine=tool.acall,
            name=tool.name,
            description=tool.description,
            args_schema=tool.parameters,
        )
        for tool in tools
    ]


def react_tools(tools: Sequence[ToolLike]) -> list[Tool]:
    """Single-input ``Tool``\\s for ReAct: the ``Action Input`` text is a JSON object.

    ``create_react_agent`` hands a tool the raw ``Action Input`` string, and a
    ``StructuredTool`` with a JSON Schema refuses strings, so ReAct users write single-input
    tools that parse their input, and put the expected input in the description (here: the
    tool's JSON Schema, so the model sees the same schema as with tool calling).
    """

    def wrap(tool: ToolLike) -> Tool:
        def run(tool_input: str) -> Any:
            return tool.call(**json.loads(tool_input))

        async def arun(tool_input: str) -> Any:
            return await tool.acall(**json.loads(tool_input))

        description = (
            f"{tool.description} Input: a JSON object with this JSON Schema: "
            f"{json.dumps(tool.parameters)}"
        )
        return Tool(name=tool.name, description=description, func=run, coroutine=arun)

    return [wrap(tool) for tool in tools]


def _history_messages(history: Sequence[tuple[str, str]]) -> list[Any]:
    return [
        HumanMessage(content) if role == "user" else AIMessage(content) for role, content in history
    ]


def build_tool_calling_executor(
    llm: ChatOpenAI,
    tools: list[StructuredTool],
    system_prompt: str,
    settings: AgentSettings,
    *,
    stream_runnable: bool = True,
) -> AgentExecutor:
    """``AgentExecutor`` + ``create_tool_calling_agent``, as in the LangChain docs."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "{system_prompt}"),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    ).partial(system_prompt=system_prompt)
    agent = create_tool_calling_agent(llm, tools, prompt)
    return AgentExecutor(
        agent=agent,
        tools=tools,
        max_iterations=settings.max_iterations,
        max_execution_time=settings.max_execution_time_s,
        stream_runnable=stream_runnable,
    )


def tool_calling_inputs(user: str, history: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """The executor's input: ``input`` and the conversation so far as messages."""
    return {"input": user, "chat_history": _history_messages(history)}


def build_react_executor(
    llm: ChatOpenAI,
    tools: list[Tool],
    system_prompt: str,
    settings: AgentSettings,
    *,
    with_history: bool = False,
) -> AgentExecutor:
    """``AgentExecutor`` + ``create_react_agent`` with the standard ReAct prompt.

    ReAct has no system message: the scenario's system prompt opens the prompt text, and a
    conversation history goes in as text (``chat_history``, as ``hwchase17/react-chat``
    does) before the standard template.
    """
    head = "{system_prompt}\n\n"
    if with_history:
        head += "Previous conversation:\n{chat_history}\n\n"
    prompt = PromptTemplate.from_template(head + REACT_TEMPLATE).partial(
        system_prompt=system_prompt
    )
    agent = create_react_agent(llm, tools, prompt)
    return AgentExecutor(
        agent=agent,
        tools=tools,
        max_iterations=settings.max_iterations,
        max_execution_time=settings.max_execution_time_s,
    )


def react_inputs(user: str, history: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    inputs: dict[str, Any] = {"input": user}
    if history:
        inputs["chat_history"] = "\n".join(
            f"{'Human' if role == 'user' else 'AI'}: {content}" for role, content in history
        )
    return inputs


def build_create_agent(llm: ChatOpenAI, tools: list[StructuredTool], system_prompt: str) -> Any:
    """LangChain 1.x ``create_agent`` (LangGraph), no middleware."""
    return create_agent(llm, tools=tools, system_prompt=system_prompt)


def create_agent_inputs(user: str, history: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    messages = [{"role": role, "content": content} for role, content in history]
    messages.append({"role": "user", "content": user})
    return {"messages": messages}


def create_agent_config(settings: AgentSettings) -> dict[str, Any]:
    return {"recursion_limit": settings.recursion_limit}
