"""The simplest agent on LangChain 1.x: create_agent with one tool."""

from typing import Any

from langchain.agents import create_agent
from langchain.tools import tool


async def ask(model: Any, backend: Any, question: str) -> str:
    @tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return backend.weather(city)

    agent = create_agent(
        model, tools=[get_weather], system_prompt="You are a weather assistant. Use the tool."
    )
    result = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return result["messages"][-1].text
