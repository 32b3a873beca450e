"""What every LangChain engine shares: the chat model, the tools, the limits' knobs."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.tools import StructuredTool, Tool
from langchain_openai import ChatOpenAI


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
    # what only the production configurations use (``production_agent``, ``production_executor``)
    tool_timeout_s: float = 30.0
    max_same_tool_calls: int = 2
    token_budget: int | None = 12000
    breaker_threshold: int = 3

    @classmethod
    def from_limits(cls, limits: Any, run_timeout_s: float | None = None) -> AgentSettings:
        """Map a scenario's ``limits`` (the same names, see the package docstring)."""
        return cls(
            max_iterations=limits.max_steps,
            request_timeout_s=limits.llm_timeout_s,
            max_retries=limits.max_retries,
            max_execution_time_s=run_timeout_s,
            tool_timeout_s=limits.tool_timeout_s,
            max_same_tool_calls=limits.max_same_tool_calls,
            token_budget=limits.token_budget,
            breaker_threshold=limits.breaker_threshold,
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
    tool's JSON Schema, so the model sees the same schema as with tool calling). Input that
    is not a JSON object is answered as such a tool answers it: with an observation telling
    the model what was wrong (the parsing is this adapter's, so its failure must not decide
    how the framework handles malformed calls).
    """

    def parse(tool_input: str) -> dict[str, Any] | str:
        try:
            args = json.loads(tool_input)
        except ValueError as exc:
            return f"Error: the Action Input is not valid JSON ({exc}); send a JSON object."
        return args if isinstance(args, dict) else "Error: the Action Input must be a JSON object."

    def wrap(tool: ToolLike) -> Tool:
        def run(tool_input: str) -> Any:
            args = parse(tool_input)
            return args if isinstance(args, str) else tool.call(**args)

        async def arun(tool_input: str) -> Any:
            args = parse(tool_input)
            return args if isinstance(args, str) else await tool.acall(**args)

        description = (
            f"{tool.description} Input: a JSON object with this JSON Schema: "
            f"{json.dumps(tool.parameters)}"
        )
        return Tool(name=tool.name, description=description, func=run, coroutine=arun)

    return [wrap(tool) for tool in tools]
