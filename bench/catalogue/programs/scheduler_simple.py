"""The simplest agent on our scheduler: LightweightAgent with one tool."""

from typing import Any

from scheduler import AgentConfig, LightweightAgent, tool


async def ask(model: Any, backend: Any, question: str) -> str:
    @tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return backend.weather(city)

    config = AgentConfig(system_prompt="You are a weather assistant. Use the tool.")
    agent = LightweightAgent(model, config, tools=[get_weather])
    result = await agent.run(question)
    return result.content
