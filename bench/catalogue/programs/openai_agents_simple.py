"""The simplest agent on the OpenAI Agents SDK: Agent with one function tool, Runner.run."""

from typing import Any

from agents import Agent, Runner, function_tool


async def ask(model: Any, backend: Any, question: str) -> str:
    @function_tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        return backend.weather(city)

    agent = Agent(
        name="weather",
        instructions="You are a weather assistant. Use the tool.",
        tools=[get_weather],
        model=model,
    )
    result = await Runner.run(agent, question)
    return result.final_output
