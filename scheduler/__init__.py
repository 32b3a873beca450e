"""schedbench's self-built agent scheduler: a small, observable async tool-calling loop.

    from scheduler import LightweightAgent, AgentConfig, OpenAIChatClient, tool

    @tool
    def lookup(order_id: str) -> dict:
        '''Look up an order by its id.'''
        return {"order_id": order_id, "status": "delivered"}

    llm = OpenAIChatClient(base_url="https://api.openai.com/v1", model="gpt-4o-mini", api_key=KEY)
    agent = LightweightAgent(llm, AgentConfig(system_prompt="You are a support agent."), tools=[lookup])
    result = await agent.run("Where is order A123?")
    result.trace.print_tree()

Runtime dependencies: httpx (imported when ``OpenAIChatClient`` or ``AnthropicChatClient``,
the Messages API client, is first used) and tiktoken (imported when exact token counting is
first needed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.agent import LightweightAgent
from scheduler.breaker import BreakerState, CircuitBreaker
from scheduler.config import AgentConfig
from scheduler.errors import (
    CircuitOpen,
    ConfigError,
    ConfirmationDenied,
    HookError,
    InvalidTransition,
    LimitExceeded,
    LLMConnectionError,
    LLMError,
    LLMResponseError,
    LLMStatusError,
    LLMStreamInterrupted,
    LLMTimeout,
    MaxDepthExceeded,
    MaxStepsExceeded,
    RepeatedCallsExceeded,
    RepeatedToolCall,
    RequestBudgetExceeded,
    RequestStepsExceeded,
    RequestTimeExceeded,
    RequestTokensExceeded,
    SchedulerError,
    TokenBudgetExceeded,
    ToolArgumentsError,
    ToolError,
    ToolExecutionError,
    ToolInputError,
    ToolNotFound,
    ToolTimeout,
    ToolVetoed,
    TotalTokensExceeded,
)
from scheduler.events import (
    AgentEvent,
    ContentDelta,
    RunFinished,
    RunStarted,
    StatusChanged,
    StepFinished,
    StreamInterrupted,
    ToolCallFinished,
    ToolCallStarted,
    format_event,
)
from scheduler.hooks import Hooks
from scheduler.memory import ConversationMemory
from scheduler.multiagent import agent_as_tool, handoff
from scheduler.pool import ToolThreadPool, default_pool
from scheduler.state import RequestScope, RunHandle, RunState
from scheduler.tools import NO_TIMEOUT, ToolContext, ToolSpec, tool
from scheduler.trace import Span, Trace
from scheduler.types import (
    TRANSITIONS,
    AgentStatus,
    Approval,
    Budget,
    ChatModel,
    ChatResponse,
    Handoff,
    RetryInfo,
    Rewrite,
    RunResult,
    StepRecord,
    TerminationReason,
    TokenUsage,
    ToolCall,
    ToolResult,
    Usage,
    Veto,
)

if TYPE_CHECKING:
    from scheduler.anthropic import AnthropicChatClient
    from scheduler.llm import OpenAIChatClient


def __getattr__(name: str) -> Any:
    # httpx costs ~50-100 ms to import: load it only when a client is first asked for
    if name == "OpenAIChatClient":
        from scheduler.llm import OpenAIChatClient

        return OpenAIChatClient
    if name == "AnthropicChatClient":
        from scheduler.anthropic import AnthropicChatClient

        return AnthropicChatClient
    raise AttributeError(f"module 'scheduler' has no attribute {name!r}")


__all__ = [
    "NO_TIMEOUT",
    "TRANSITIONS",
    "AgentConfig",
    "AgentEvent",
    "AgentStatus",
    "AnthropicChatClient",
    "Approval",
    "BreakerState",
    "Budget",
    "ChatModel",
    "ChatResponse",
    "CircuitBreaker",
    "CircuitOpen",
    "ConfigError",
    "ConfirmationDenied",
    "ContentDelta",
    "ConversationMemory",
    "Handoff",
    "HookError",
    "Hooks",
    "InvalidTransition",
    "LLMConnectionError",
    "LLMError",
    "LLMResponseError",
    "LLMStatusError",
    "LLMStreamInterrupted",
    "LLMTimeout",
    "LightweightAgent",
    "LimitExceeded",
    "MaxDepthExceeded",
    "MaxStepsExceeded",
    "OpenAIChatClient",
    "RepeatedCallsExceeded",
    "RepeatedToolCall",
    "RequestBudgetExceeded",
    "RequestScope",
    "RequestStepsExceeded",
    "RequestTimeExceeded",
    "RequestTokensExceeded",
    "RetryInfo",
    "Rewrite",
    "RunFinished",
    "RunHandle",
    "RunResult",
    "RunStarted",
    "RunState",
    "SchedulerError",
    "Span",
    "StatusChanged",
    "StepFinished",
    "StepRecord",
    "StreamInterrupted",
    "TerminationReason",
    "TokenBudgetExceeded",
    "TokenUsage",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolContext",
    "ToolError",
    "ToolExecutionError",
    "ToolInputError",
    "ToolNotFound",
    "ToolResult",
    "ToolSpec",
    "ToolThreadPool",
    "ToolTimeout",
    "ToolVetoed",
    "TotalTokensExceeded",
    "Trace",
    "Usage",
    "Veto",
    "agent_as_tool",
    "default_pool",
    "format_event",
    "handoff",
    "tool",
]
