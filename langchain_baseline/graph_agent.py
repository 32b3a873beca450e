"""LangChain 1.x ``langchain.agents.create_agent`` (a LangGraph graph)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI

from langchain_baseline.common import AgentSettings


def build_create_agent(llm: ChatOpenAI, tools: list[StructuredTool], system_prompt: str) -> Any:
    """LangChain 1.x ``create_agent`` (LangGraph), no middleware."""
    return create_agent(llm, tools=tools, system_prompt=system_prompt)


def create_agent_inputs(user: str, history: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    messages = [{"role": role, "content": content} for role, content in history]
    messages.append({"role": "user", "content": user})
    return {"messages": messages}


def create_agent_config(settings: AgentSettings) -> dict[str, Any]:
    return {"recursion_limit": settings.recursion_limit}
