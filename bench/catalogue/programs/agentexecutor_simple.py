"""The simplest agent on AgentExecutor: the docs' tool-calling agent with one tool."""

from typing import Any

from langchain_classic.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool


async def ask(model: Any, backend: Any, question: str) -> str:
    @tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return backend.weather(city)

    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a weather assistant. Use the tool."),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    agent = create_tool_calling_agent(model, [get_weather], prompt)
    executor = AgentExecutor(agent=agent, tools=[get_weather])
    result = await executor.ainvoke({"input": question})
    return result["output"]
