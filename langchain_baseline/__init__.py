"""LangChain agents written the way LangChain's own docs write them (see ``agents.py``).

Importing this package forces LangSmith tracing off *before* LangChain is imported: with
tracing on and no network, LangChain blocks at exit trying to flush its traces.
"""

import os

for _var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ[_var] = "false"

from langchain_baseline.agents import (  # noqa: E402
    REACT_TEMPLATE,
    STOPPED_SENTINELS,
    AgentSettings,
    ToolLike,
    build_create_agent,
    build_react_executor,
    build_tool_calling_executor,
    create_agent_config,
    create_agent_inputs,
    make_chat_model,
    react_inputs,
    react_tools,
    structured_tools,
    tool_calling_inputs,
)

__all__ = [
    "REACT_TEMPLATE",
    "STOPPED_SENTINELS",
    "AgentSettings",
    "ToolLike",
    "build_create_agent",
    "build_react_executor",
    "build_tool_calling_executor",
    "create_agent_config",
    "create_agent_inputs",
    "make_chat_model",
    "react_inputs",
    "react_tools",
    "structured_tools",
    "tool_calling_inputs",
]
