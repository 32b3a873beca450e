"""``AgentExecutor`` agents from ``langchain_classic``: tool calling and text ReAct."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_classic.agents import AgentExecutor, create_react_agent, create_tool_calling_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.tools import StructuredTool, Tool
from langchain_openai import ChatOpenAI

from langchain_baseline.common import AgentSettings

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
